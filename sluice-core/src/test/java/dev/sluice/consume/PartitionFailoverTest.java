package dev.sluice.consume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.ConsumeOptions;
import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.GroupConfig;
import dev.sluice.Outcome;
import dev.sluice.PartitionInfo;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A member of a partitioned group in another JVM is killed with SIGKILL mid-batch: it cannot give its buckets back,
 * so they are taken over once their leases expire (within the lease plus a heartbeat), never earlier — no key of a
 * killed member's buckets starts here while the child could still have been running it — and every message is
 * handled, per key in order, with only the child's uncommitted work delivered again — as its second attempt.
 */
@SluiceTest
class PartitionFailoverTest {
    static final Duration LEASE = Duration.ofMillis(1_500);

    @Test
    void aKilledMembersBucketsAreTakenOverAfterTheirLeaseAndNothingIsLost(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).clientId("parent")
                .fleetLease(LEASE).maintenance(false).build()) {
            ConsumerGroup<String> g = PartitionedGroupTest.group(sluice, "part.kill", "g", GroupConfig.builder().partitions(4).build());
            PartitionedGroupTest.produce(sluice, "part.kill", 400, 20);
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            ProcessBuilder pb = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), PartitionChild.class.getName(),
                    db.schema(), "part.kill", "g", Long.toString(LEASE.toMillis()), "20").redirectErrorStream(true);
            pb.environment().put("SLUICE_CHILD_URL", db.jdbcUrl());
            Process child = pb.start();
            Map<Long, String> childStarted = new ConcurrentHashMap<>();
            Set<Long> childDone = ConcurrentHashMap.newKeySet();
            Thread reader = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = r.readLine()) != null) {
                        String[] f = line.split(" ");
                        if (f[0].equals("START") && f.length == 3) {
                            childStarted.put(Long.parseLong(f[1]), f[2]);
                        } else if (f[0].equals("DONE") && f.length == 2) {
                            childDone.add(Long.parseLong(f[1]));
                        }
                    }
                } catch (Exception ignored) {
                    // the child was killed
                }
            });
            reader.start();
            try {
                // The child owns all four buckets and is working through them.
                await().atMost(Duration.ofSeconds(30)).until(() -> childDone.size() >= 40);
                assertThat(g.partitions()).allSatisfy(p -> assertThat(p.holder()).isEqualTo("child"));
                child.destroyForcibly();
                assertThat(child.waitFor(10, TimeUnit.SECONDS)).isTrue();
                Instant killed = Instant.now();
                Map<Long, Instant> mine = new ConcurrentHashMap<>();
                Map<Long, Integer> attempts = new ConcurrentHashMap<>();
                Map<String, Integer> lastSeq = new ConcurrentHashMap<>();
                java.util.List<String> violations = new java.util.concurrent.CopyOnWriteArrayList<>();
                try (Consumption c = g.consume(m -> {
                    mine.putIfAbsent(m.id(), Instant.now());
                    attempts.putIfAbsent(m.id(), m.attempt());
                    int seq = Integer.parseInt(m.payload().substring(m.payload().indexOf(':') + 1));
                    Integer before = lastSeq.put(m.messageKey(), seq);
                    if (before != null && seq < before) {
                        violations.add(m.messageKey() + ": " + seq + " after " + before);
                    }
                    return Outcome.success();
                }, ConsumeOptions.defaults().withPollInterval(Duration.ofMillis(20)).withBatchSize(20))) {
                    await().atMost(Duration.ofSeconds(30)).until(() -> {
                        Set<Long> all = new java.util.HashSet<>(childDone);
                        all.addAll(mine.keySet());
                        return all.size() == 400;
                    });
                }
                Instant first = mine.values().stream().min(Instant::compareTo).orElseThrow();
                // Not before the child's leases could have run out: its last renewal was no earlier than the kill minus one
                // heartbeat, so its buckets were live until at least kill + lease - lease/3.
                assertThat(Duration.between(killed, first)).isGreaterThanOrEqualTo(LEASE.minus(LEASE.dividedBy(3)).minusMillis(100));
                assertThat(Duration.between(killed, first)).isLessThan(LEASE.plusSeconds(5));
                assertThat(violations).isEmpty();
                // Redelivered: only what the child had not committed. Every message it started but did not finish is here.
                for (Long id : childStarted.keySet()) {
                    if (!childDone.contains(id)) {
                        assertThat(mine).containsKey(id);
                        // Counted: the child's fetch marked its bucket before it ran, so this is the second delivery.
                        assertThat(attempts.get(id)).as("attempt of %d, started by the killed child", id).isEqualTo(2);
                    }
                }
                assertThat(g.partitions()).allSatisfy(p -> assertThat(p.position()).isEqualTo(400));
                assertThat(g.partitions()).extracting(PartitionInfo::bucket).containsExactly(0, 1, 2, 3);
            } finally {
                child.destroyForcibly();
                reader.join(5_000);
            }
        }
    }
}
