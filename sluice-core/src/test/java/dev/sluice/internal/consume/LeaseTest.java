package dev.sluice.internal.consume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.ConsumeOptions;
import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.GroupConfig;
import dev.sluice.Outcome;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

@SluiceTest
class LeaseTest {

    private static long scalar(TestDatabase db, String sql) throws Exception {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(sql); ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Test
    void aHolderThatStopsRenewingLosesItsRangeAndItsLateOutcomeIsRefused(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            long sid = sluice.stream("stale").register().id();
            Producer<String> p = sluice.stream("stale", String.class).producer();
            ConsumerGroup<String> group = sluice.stream("stale", String.class).consumerGroup("g");
            group.register();
            for (int i = 0; i < 5; i++) {
                p.produce("m" + i);
            }
            CountDownLatch stuck = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            ConsumeOptions opts = ConsumeOptions.defaults().withLeaseTimeout(Duration.ofSeconds(1))
                    .withPollInterval(Duration.ofMillis(50)).withConcurrency(8).withShutdownTimeout(Duration.ofSeconds(1));
            // A: claims the range, every handler blocks, and A stops renewing.
            GroupConsumer<String> a = (GroupConsumer<String>) group.consume(m -> {
                stuck.countDown();
                release.await();
                return Outcome.terminal("A's late verdict"); // would make dead letters if accepted
            }, opts);
            assertThat(stuck.await(10, TimeUnit.SECONDS)).isTrue();
            a.renewalSuspended = true;
            Map<String, AtomicInteger> byB = new ConcurrentHashMap<>();
            try (Consumption b = group.consume(m -> {
                byB.computeIfAbsent(m.payload(), k -> new AtomicInteger()).incrementAndGet();
                return Outcome.success();
            }, opts)) {
                // B takes the expired range over and delivers every message of it.
                await().atMost(Duration.ofSeconds(20)).until(() -> byB.size() == 5);
                assertThat(b.stats().rangesReclaimed()).isGreaterThanOrEqualTo(1);
                await().atMost(Duration.ofSeconds(10)).until(() -> scalar(db, "SELECT count(*) FROM \"" + db.schema()
                        + "\".claim_lease_" + sid) == 0);
                // A wakes up late: its outcome is refused and changes nothing.
                release.countDown();
                await().atMost(Duration.ofSeconds(10)).until(() -> a.stats().leasesLost() >= 1);
                assertThat(scalar(db, "SELECT count(*) FROM \"" + db.schema() + "\".exception_queue_" + sid)).isZero();
                assertThat(a.stats().succeeded()).isZero();
            } finally {
                a.close();
            }
        }
    }

    @Test
    void aHolderWhoseLeaseRanOutByItsOwnClockStartsNothingMoreOfTheRange(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            sluice.stream("late-chain").register();
            ConsumerGroup<String> group = sluice.stream("late-chain", String.class).consumerGroup("g");
            group.register(GroupConfig.builder().concurrency(dev.sluice.ConcurrencyPolicy.ORDERED).build());
            Producer<String> p = sluice.stream("late-chain", String.class).producer();
            p.produce("m0", dev.sluice.ProduceOptions.key("k"));
            p.produce("m1", dev.sluice.ProduceOptions.key("k"));
            CountDownLatch stuck = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            List<String> byA = new java.util.concurrent.CopyOnWriteArrayList<>();
            List<String> byB = new java.util.concurrent.CopyOnWriteArrayList<>();
            ConsumeOptions opts = ConsumeOptions.defaults().withLeaseTimeout(Duration.ofSeconds(1))
                    .withPollInterval(Duration.ofMillis(50)).withShutdownTimeout(Duration.ofSeconds(1));
            // A runs m0 of the key's chain and stalls in it while its renewals stop (a database restart, a pause).
            GroupConsumer<String> a = (GroupConsumer<String>) group.consume(m -> {
                byA.add(m.payload() + ":" + m.attempt());
                if (m.payload().equals("m0")) {
                    stuck.countDown();
                    release.await();
                }
                return Outcome.success();
            }, opts);
            try {
                assertThat(stuck.await(10, TimeUnit.SECONDS)).isTrue();
                a.renewalSuspended = true;
                try (Consumption b = group.consume(m -> {
                    byB.add(m.payload() + ":" + m.attempt());
                    return Outcome.success();
                }, opts)) {
                    // B takes the expired range over and runs the whole chain as attempt 2.
                    await().atMost(Duration.ofSeconds(20)).until(() -> byB.size() == 2);
                    assertThat(byB).containsExactly("m0:2", "m1:2");
                    // A's m0 ends: its chain's next message is not started — A's lease ran out by its own clock.
                    release.countDown();
                    await().atMost(Duration.ofSeconds(10)).until(() -> a.stats().leasesLost() >= 1);
                    assertThat(byA).containsExactly("m0:1");
                }
            } finally {
                release.countDown();
                a.close();
            }
        }
    }

    @Test
    void renewalKeepsASlowHandlersRange(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            sluice.stream("slow").register();
            ConsumerGroup<String> group = sluice.stream("slow", String.class).consumerGroup("g");
            group.register();
            sluice.stream("slow", String.class).producer().produce("slow one");
            AtomicInteger calls = new AtomicInteger();
            ConsumeOptions opts = ConsumeOptions.defaults().withLeaseTimeout(Duration.ofMillis(900)).withPollInterval(Duration.ofMillis(50));
            try (Consumption a = group.consume(m -> {
                calls.incrementAndGet();
                Thread.sleep(3_000); // more than three lease timeouts
                return Outcome.success();
            }, opts); Consumption b = group.consume(m -> {
                calls.incrementAndGet();
                return Outcome.success();
            }, opts)) {
                await().atMost(Duration.ofSeconds(20)).until(() -> a.stats().succeeded() + b.stats().succeeded() == 1);
                Thread.sleep(500);
                assertThat(calls).hasValue(1);
                assertThat(a.stats().leasesLost() + b.stats().leasesLost()).isZero();
            }
        }
    }

    @Test
    void quarantineTurnsOnlyTheUnresolvedMessagesOfAPoisonRangeIntoRows(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            long sid = sluice.stream("poison").register().id();
            ConsumerGroup<String> group = sluice.stream("poison", String.class).consumerGroup("g");
            long gid = group.register(GroupConfig.builder().maxRangeReclaims(1).build()).id();
            Producer<String> p = sluice.stream("poison", String.class).producer();
            List<Long> ids = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                ids.add(p.produce("m" + i).id());
            }
            String q = "\"" + db.schema() + "\"";
            // A range that crashed holders already took over once (reclaims = 1) and expired again, with
            // the first two messages recorded as resolved by an earlier holder.
            db.execute("UPDATE " + q + ".consumer_group_cursor_" + sid + " SET claimed = " + ids.get(5) + ", settled_head = "
                    + ids.get(5) + " WHERE consumer_group_id = " + gid);
            db.execute("INSERT INTO " + q + ".claim_lease_" + sid + " (consumer_group_id, low, high, owner_token, expires_at,"
                    + " reclaims, resolved) VALUES (" + gid + ", " + ids.get(0) + ", " + ids.get(5)
                    + ", gen_random_uuid(), now() - interval '1 second', 1, ARRAY[" + ids.get(0) + ", " + ids.get(1) + "]::bigint[])");
            Map<String, AtomicInteger> seen = new ConcurrentHashMap<>();
            try (Consumption c = group.consume(m -> {
                seen.computeIfAbsent(m.payload(), k -> new AtomicInteger()).incrementAndGet();
                return Outcome.success();
            }, ConsumeOptions.defaults().withPollInterval(Duration.ofMillis(50)))) {
                await().atMost(Duration.ofSeconds(20)).until(() -> seen.size() == 4);
                Thread.sleep(300);
                assertThat(seen).containsOnlyKeys("m2", "m3", "m4", "m5");
                assertThat(c.stats().rangesReclaimed()).isZero(); // quarantined, not re-run as a range
            }
            assertThat(scalar(db, "SELECT count(*) FROM " + q + ".claim_lease_" + sid)).isZero();
            assertThat(scalar(db, "SELECT count(*) FROM " + q + ".exception_queue_" + sid)).isZero();
        }
    }
}
