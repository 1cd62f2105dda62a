package dev.sluice.internal.consume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.ConcurrencyPolicy;
import dev.sluice.ConsumeOptions;
import dev.sluice.ConsumerGroup;
import dev.sluice.GroupConfig;
import dev.sluice.Outcome;
import dev.sluice.ProduceOptions;
import dev.sluice.Producer;
import dev.sluice.RetryPolicy;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A consumer whose renewal came late (a database restart, a pause) can take its own expired range or row over: the
 * same owner token holds it again. Its earlier holding — still running a handler — must then be as stale as another
 * consumer's would be: its completion or outcome is refused, so it can neither write the rows of a range the new
 * holding is running again nor put a row back below the attempts the new claim counted. Found by the reliability lab
 * (three `ordered` messages delivered as attempt 2 twice: by the self-takeover, then from the rows the earlier
 * holding's completion wrote). A partitioned member that loses a bucket and takes it back itself likewise never commits
 * the batch it was running when it lost it: the new holding runs it again from the stored position.
 */
@SluiceTest
class SelfTakeoverTest {
    private static final ConsumeOptions OPTS = ConsumeOptions.defaults().withLeaseTimeout(Duration.ofSeconds(1))
            .withPollInterval(Duration.ofMillis(50)).withShutdownTimeout(Duration.ofSeconds(1));
    private static final RetryPolicy QUICK = RetryPolicy.DEFAULT.withBackoff(Duration.ofMillis(10), 1.0, Duration.ofMillis(10))
            .withJitter(0);

    private static long scalar(TestDatabase db, String sql) throws Exception {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(sql); ResultSet rs = ps.executeQuery()) {
            assertThat(rs.next()).isTrue();
            return rs.getLong(1);
        }
    }

    @Test
    void aRangeTakenOverByItsOwnHolderRefusesTheEarlierHoldingsCompletion(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(false).build()) {
            long sid = sluice.stream("self.range").register().id();
            ConsumerGroup<String> group = sluice.stream("self.range", String.class).consumerGroup("g");
            long gid = group.register(GroupConfig.builder().concurrency(ConcurrencyPolicy.ORDERED).retry(QUICK).build()).id();
            Producer<String> p = sluice.stream("self.range", String.class).producer();
            p.produce("m0", ProduceOptions.key("a"));
            long last = p.produce("m1", ProduceOptions.key("b")).id();
            String q = "\"" + db.schema() + "\"";
            CountDownLatch firstStuck = new CountDownLatch(1);
            CountDownLatch releaseFirst = new CountDownLatch(1);
            CountDownLatch secondStuck = new CountDownLatch(1);
            CountDownLatch releaseSecond = new CountDownLatch(1);
            List<String> calls = new CopyOnWriteArrayList<>();
            GroupConsumer<String> a = (GroupConsumer<String>) group.consume(m -> {
                calls.add(m.payload() + ":" + m.attempt());
                if (m.payload().equals("m0") && m.attempt() == 1) {
                    throw new IllegalStateException("transient"); // an outcome row the range keeps in memory
                }
                if (m.payload().equals("m1") && m.attempt() == 1) {
                    firstStuck.countDown();
                    releaseFirst.await();
                } else if (m.payload().equals("m1")) {
                    secondStuck.countDown();
                    releaseSecond.await();
                }
                return Outcome.success();
            }, OPTS);
            try {
                assertThat(firstStuck.await(10, TimeUnit.SECONDS)).isTrue();
                await().atMost(Duration.ofSeconds(10)).until(() -> calls.contains("m0:1"));
                // The holder freezes past its lease, then wakes: it finds the lease lost and takes the range over itself.
                a.renewalSuspended = true;
                await().atMost(Duration.ofSeconds(10)).until(() -> scalar(db, "SELECT count(*) FROM " + q + ".claim_lease_" + sid
                        + " WHERE consumer_group_id = " + gid + " AND expires_at <= now()") == 1);
                a.renewalSuspended = false;
                assertThat(secondStuck.await(10, TimeUnit.SECONDS)).isTrue();
                // m0 (another key) runs beside m1 in the new holding: it may start just after m1 does.
                await().atMost(Duration.ofSeconds(10)).until(() -> calls.contains("m0:2"));
                // The earlier holding's handler ends: its range completes — and must be refused (its m0 row would be
                // delivered again as attempt 2, though the new holding ran m0 as attempt 2 already).
                releaseFirst.countDown();
                await().atMost(Duration.ofSeconds(10)).until(() -> a.stats().leasesLost() >= 1);
                assertThat(scalar(db, "SELECT count(*) FROM " + q + ".exception_queue_" + sid + " WHERE consumer_group_id = " + gid))
                        .as("rows written by the earlier holding").isZero();
                assertThat(scalar(db, "SELECT count(*) FROM " + q + ".claim_lease_" + sid + " WHERE consumer_group_id = " + gid))
                        .as("the new holding's lease stays").isEqualTo(1);
                releaseSecond.countDown();
                await().atMost(Duration.ofSeconds(10)).until(() -> scalar(db, "SELECT count(*) FROM " + q + ".claim_lease_" + sid
                        + " WHERE consumer_group_id = " + gid) == 0);
                assertThat(group.get().orElseThrow().committed()).isGreaterThanOrEqualTo(last);
                assertThat(calls).containsExactlyInAnyOrder("m0:1", "m1:1", "m0:2", "m1:2");
            } finally {
                releaseFirst.countDown();
                releaseSecond.countDown();
                a.close();
            }
        }
    }

    @Test
    void aRowClaimedAgainByItsOwnConsumerRefusesTheEarlierClaimsOutcome(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(false).build()) {
            long sid = sluice.stream("self.row").register().id();
            ConsumerGroup<String> group = sluice.stream("self.row", String.class).consumerGroup("g");
            long gid = group.register(GroupConfig.builder().retry(QUICK.withMaxAttempts(6)).build()).id();
            sluice.stream("self.row", String.class).producer().produce("m0");
            String q = "\"" + db.schema() + "\"";
            CountDownLatch secondStuck = new CountDownLatch(1);
            CountDownLatch releaseSecond = new CountDownLatch(1);
            CountDownLatch thirdStuck = new CountDownLatch(1);
            CountDownLatch releaseThird = new CountDownLatch(1);
            List<Integer> attempts = new CopyOnWriteArrayList<>();
            GroupConsumer<String> a = (GroupConsumer<String>) group.consume(m -> {
                attempts.add(m.attempt());
                switch (m.attempt()) {
                    case 1 -> throw new IllegalStateException("transient"); // becomes a row
                    case 2 -> {
                        secondStuck.countDown();
                        releaseSecond.await();
                        throw new IllegalStateException("late failure"); // the earlier claim's outcome: must be refused
                    }
                    case 3 -> {
                        thirdStuck.countDown();
                        releaseThird.await();
                        return Outcome.success();
                    }
                    default -> {
                        return Outcome.success();
                    }
                }
            }, OPTS);
            try {
                assertThat(secondStuck.await(10, TimeUnit.SECONDS)).isTrue();
                a.renewalSuspended = true;
                await().atMost(Duration.ofSeconds(10)).until(() -> scalar(db, "SELECT count(*) FROM " + q + ".exception_queue_" + sid
                        + " WHERE consumer_group_id = " + gid + " AND status = 'inflight' AND lease_expires_at <= now()") == 1);
                a.renewalSuspended = false;
                // The same consumer claims its own expired row again: attempt 3.
                assertThat(thirdStuck.await(10, TimeUnit.SECONDS)).isTrue();
                releaseSecond.countDown();
                await().atMost(Duration.ofSeconds(10)).until(() -> a.stats().leasesLost() >= 1);
                assertThat(scalar(db, "SELECT attempts FROM " + q + ".exception_queue_" + sid + " WHERE consumer_group_id = " + gid))
                        .as("the row keeps the attempts of its newest claim").isEqualTo(3);
                assertThat(scalar(db, "SELECT count(*) FROM " + q + ".exception_queue_" + sid + " WHERE consumer_group_id = " + gid
                        + " AND status = 'inflight'")).as("still held by the newest claim").isEqualTo(1);
                releaseThird.countDown();
                await().atMost(Duration.ofSeconds(10)).until(() -> scalar(db, "SELECT count(*) FROM " + q + ".exception_queue_" + sid
                        + " WHERE consumer_group_id = " + gid) == 0);
                assertThat(attempts).containsExactly(1, 2, 3);
            } finally {
                releaseSecond.countDown();
                releaseThird.countDown();
                a.close();
            }
        }
    }

    @Test
    void aBucketTakenBackByItsOwnMemberRefusesTheEarlierBatchsCommit(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(false)
                .fleetLease(Duration.ofMillis(1_500)).build()) {
            long sid = sluice.stream("self.bucket").register().id();
            ConsumerGroup<String> group = sluice.stream("self.bucket", String.class).consumerGroup("g");
            long gid = group.register(GroupConfig.builder().partitions(1).retry(QUICK).build()).id();
            Producer<String> p = sluice.stream("self.bucket", String.class).producer();
            p.produce("m0", ProduceOptions.key("a"));
            long last = p.produce("m1", ProduceOptions.key("b")).id();
            String q = "\"" + db.schema() + "\"";
            CountDownLatch firstStuck = new CountDownLatch(1);
            CountDownLatch releaseFirst = new CountDownLatch(1);
            List<String> calls = new CopyOnWriteArrayList<>();
            PartitionConsumer<String> a = (PartitionConsumer<String>) group.consume(m -> {
                calls.add(m.payload() + ":" + m.attempt());
                if (m.payload().equals("m0") && m.attempt() == 1) {
                    throw new IllegalStateException("transient"); // an outcome row the batch keeps in memory
                }
                if (m.payload().equals("m1") && m.attempt() == 1) {
                    firstStuck.countDown();
                    releaseFirst.await();
                }
                return Outcome.success();
            }, OPTS.withBatchSize(10));
            try {
                assertThat(firstStuck.await(10, TimeUnit.SECONDS)).isTrue();
                await().atMost(Duration.ofSeconds(10)).until(() -> calls.contains("m0:1"));
                // The member's shard lease goes to someone else (its renewal came late), and then comes free again: the
                // member finds the bucket lost, then takes it back itself and runs it again from the stored position.
                db.execute("UPDATE " + q + ".shard_lease SET owner_token = gen_random_uuid() WHERE consumer_group_id = " + gid);
                await().atMost(Duration.ofSeconds(10)).until(() -> a.buckets().isEmpty());
                db.execute("UPDATE " + q + ".shard_lease SET owner_token = NULL, owner_instance_id = NULL, lease_expires_at = NULL"
                        + " WHERE consumer_group_id = " + gid);
                await().atMost(Duration.ofSeconds(10)).until(() -> a.buckets().contains(0) && calls.contains("m0:2"));
                // The earlier batch's handler ends: its commit must be refused — its m0 row would run m0 as attempt 2
                // again, though the new holding ran it as attempt 2 already.
                releaseFirst.countDown();
                await().atMost(Duration.ofSeconds(10)).until(() -> a.stats().leasesLost() >= 1);
                await().atMost(Duration.ofSeconds(10)).until(() -> scalar(db, "SELECT coalesce(min(position), 0) FROM ("
                        + "SELECT DISTINCT ON (bucket) position FROM " + q + ".partition_cursor_" + sid + " WHERE consumer_group_id = "
                        + gid + " ORDER BY bucket, seq DESC) c") >= last && calls.contains("m1:2"));
                // Every row settled (the new holding may run a message of a key still busy here as a row); a row the
                // earlier batch wrote would have run m0 as attempt 2 once more before it settled.
                await().atMost(Duration.ofSeconds(10)).until(() -> scalar(db, "SELECT count(*) FROM " + q + ".exception_queue_" + sid
                        + " WHERE consumer_group_id = " + gid) == 0);
                assertThat(calls).containsExactlyInAnyOrder("m0:1", "m1:1", "m0:2", "m1:2");
            } finally {
                releaseFirst.countDown();
                a.close();
            }
        }
    }
}
