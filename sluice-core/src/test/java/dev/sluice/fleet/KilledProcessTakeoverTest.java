package dev.sluice.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.InstanceInfo;
import dev.sluice.InstanceState;
import dev.sluice.Outcome;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A process killed with SIGKILL cannot leave the fleet: its instances expire, and a standby in another process
 * takes over its capped worker within the lease plus one heartbeat — and then handles the group's messages — and
 * its manager role within about one lease.
 */
@SluiceTest
class KilledProcessTakeoverTest {
    static final Duration LEASE = Duration.ofMillis(1_500);

    @Test
    void aStandbyTakesOverAKilledProcessesWorkWithinTheLease(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).clientId("parent")
                .fleetLease(LEASE).maintenanceInterval(Duration.ofMillis(200)).build()) {
            ConsumerGroup<String> g = FleetTest.group(sluice, "fleet.kill", "billing");
            String key = "consumer:fleet.kill/billing";
            sluice.fleet().setTarget(key, 1);
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            ProcessBuilder pb = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), FleetChild.class.getName(),
                    db.schema(), "fleet.kill", "billing", Long.toString(LEASE.toMillis())).redirectErrorStream(true);
            pb.environment().put("SLUICE_CHILD_URL", db.jdbcUrl());
            Process child = pb.start();
            try {
                BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
                String line;
                while ((line = out.readLine()) != null && !line.equals("READY")) {
                    // the child's log lines
                }
                assertThat(line).isEqualTo("READY");
                AtomicInteger handled = new AtomicInteger();
                try (Consumption mine = g.consume(m -> {
                    handled.incrementAndGet();
                    return Outcome.success();
                }); Producer<String> p = sluice.stream("fleet.kill", String.class).producer()) {
                    InstanceInfo standby = sluice.fleet().instances().stream().filter(i -> i.holder().equals("parent")).findFirst()
                            .orElseThrow();
                    assertThat(standby.state()).isEqualTo(InstanceState.STANDBY);
                    // The child also holds the manager; the parent competes (its consumption is its first running part).
                    await().atMost(Duration.ofSeconds(5)).until(() -> sluice.fleet().instances().stream()
                            .filter(i -> i.worker().equals("manager")).count() == 2);
                    assertThat(sluice.maintenance().status().manager()).map(InstanceInfo::holder).contains("child");
                    assertThat(sluice.maintenance().holding()).isFalse();
                    long killedAt = System.nanoTime();
                    child.destroyForcibly();
                    assertThat(child.waitFor(10, TimeUnit.SECONDS)).isTrue();
                    await().atMost(LEASE.plusSeconds(5)).pollInterval(Duration.ofMillis(20)).until(() -> sluice.fleet().instances()
                            .stream().anyMatch(i -> i.holder().equals("parent") && i.state() == InstanceState.ACTIVE));
                    Duration takeover = Duration.ofNanos(System.nanoTime() - killedAt);
                    assertThat(takeover).isLessThanOrEqualTo(LEASE.plusSeconds(5));
                    // The manager too: a standby looks again when the holder's lease is due, so within about one lease.
                    await().atMost(LEASE.plusSeconds(5)).pollInterval(Duration.ofMillis(20))
                            .until(() -> sluice.maintenance().holding());
                    assertThat(Duration.ofNanos(System.nanoTime() - killedAt)).as("manager taken over after the kill")
                            .isLessThanOrEqualTo(LEASE.plusMillis(LEASE.toMillis() / 3 + 500));
                    assertThat(sluice.maintenance().status().manager()).map(InstanceInfo::holder).contains("parent");
                    assertThat(sluice.fleet().instances()).filteredOn(i -> i.holder().equals("child"))
                            .allMatch(i -> i.state() == InstanceState.EXPIRED);
                    p.produce("after the kill");
                    await().atMost(Duration.ofSeconds(10)).until(() -> handled.get() == 1);
                }
            } finally {
                child.destroyForcibly();
            }
        }
    }
}
