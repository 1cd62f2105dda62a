package dev.sluice.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.InstanceInfo;
import dev.sluice.InstanceState;
import dev.sluice.Outcome;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.testing.LostCommitReplies;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A process starting its parts while its connections are terminated: the commit of its fleet claim went in but the
 * reply was lost (SLU-0304). The start must go on with the one instance it made — before, {@code consume} failed and
 * the lab's consumer process gave up.
 */
@SluiceTest
class LostClaimReplyTest {

    @Test
    void aConsumptionWhoseFleetClaimLostItsCommitReplyStartsWithOneActiveInstance(TestDatabase db) throws Exception {
        String claim = ".worker_instance (worker_config_id, token, holder"; // the claim's INSERT
        LostCommitReplies ds = new LostCommitReplies(db.dataSource(), 0,
                statements -> statements.stream().anyMatch(s -> s.contains(claim)));
        String key = "consumer:fleet.lost/billing";
        try (Sluice admin = FleetTest.client(db, "admin")) {
            FleetTest.group(admin, "fleet.lost", "billing");
            admin.fleet().setTarget(key, 1); // one instance at most (ClaimReplayTest: a replay is not its own standby)
        }
        try (Sluice sluice = Sluice.builder().dataSource(ds).schema(db.schema()).clientId("proc-lost")
                .fleetLease(Duration.ofSeconds(30)).maintenance(false).build()) {
            ConsumerGroup<String> g = sluice.stream("fleet.lost", String.class).consumerGroup("billing");
            CountDownLatch handled = new CountDownLatch(1);
            ds.lostReplies.set(2);
            try (Consumption c = g.consume(m -> {
                handled.countDown();
                return Outcome.success();
            }); Producer<String> p = sluice.stream("fleet.lost", String.class).producer()) {
                assertThat(ds.lost.get()).as("both claim replies lost").isEqualTo(2);
                List<InstanceInfo> mine = sluice.fleet().instances().stream().filter(i -> i.worker().equals(key)).toList();
                assertThat(mine).as("one row, claimed once and found again by each replay").hasSize(1);
                assertThat(mine.get(0).state()).isEqualTo(InstanceState.ACTIVE);
                assertThat(mine.get(0).holder()).isEqualTo("proc-lost");
                p.produce("m");
                assertThat(handled.await(10, TimeUnit.SECONDS)).as("the consumption runs").isTrue();
            }
            assertThat(sluice.fleet().instances()).noneMatch(i -> i.worker().equals(key));
        }
    }
}
