package dev.sluice.consume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.sluice.ConcurrencyPolicy;
import dev.sluice.ConsumeOptions;
import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.ErrorCode;
import dev.sluice.GroupConfig;
import dev.sluice.GroupInfo;
import dev.sluice.Message;
import dev.sluice.Outcome;
import dev.sluice.PartitionInfo;
import dev.sluice.ProduceOptions;
import dev.sluice.Producer;
import dev.sluice.RetryPolicy;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.Stream;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Partitioned groups in one JVM: registration and its checks, per-key order with retries and dead letters, bucket
 * ownership shared by members (fair share, shedding on join, release on close), no key in two members at once, the
 * position arithmetic, rewind, the operator listing and repartition. Failover of a killed process: {@link
 * PartitionFailoverTest}.
 */
@SluiceTest
class PartitionedGroupTest {
    static final Duration LEASE = Duration.ofMillis(2_000);
    static final ConsumeOptions OPTS = ConsumeOptions.defaults().withPollInterval(Duration.ofMillis(20))
            .withIdleCheck(Duration.ofMillis(200)).withBatchSize(50).withConcurrency(8);
    static final RetryPolicy QUICK = RetryPolicy.DEFAULT.withBackoff(Duration.ofMillis(30), 1.5, Duration.ofMillis(100));
    static Sluice sluice;
    static TestDatabase database;

    @BeforeAll
    static void setUp(TestDatabase db) {
        database = db;
        sluice = client(db, "one");
    }

    @AfterAll
    static void tearDown() {
        sluice.close();
    }

    static Sluice client(TestDatabase db, String id) {
        return Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).clientId(id).fleetLease(LEASE)
                .maintenance(false).build();
    }

    static ConsumerGroup<String> group(Sluice s, String stream, String group, GroupConfig config) {
        Stream<String> st = s.stream(stream, String.class);
        st.register();
        ConsumerGroup<String> g = st.consumerGroup(group);
        g.register(config);
        return g;
    }

    static long scalar(String sql, Object... args) {
        try (Connection c = database.connect(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setObject(i + 1, args[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        } catch (Exception e) {
            throw new IllegalStateException(sql, e);
        }
    }

    static String q() {
        return "\"" + database.schema() + "\"";
    }

    /** Produces {@code n} messages over {@code keys} keys: payload "key:seq", in id order per key. */
    static void produce(Sluice s, String stream, int n, int keys) {
        produce(s, stream, 0, n, keys);
    }

    /** As {@link #produce(Sluice, String, int, int)}, the messages numbered from {@code from} (a second wave goes on counting). */
    static void produce(Sluice s, String stream, int from, int n, int keys) {
        try (Producer<String> p = s.stream(stream, String.class).producer()) {
            List<dev.sluice.Outgoing<String>> batch = new ArrayList<>();
            for (int i = from; i < from + n; i++) {
                String key = "k" + (i % keys);
                batch.add(new dev.sluice.Outgoing<>(key + ":" + (i / keys), ProduceOptions.key(key)));
                if (batch.size() == 100 || i == from + n - 1) {
                    p.produceBatch(batch); // one transaction per 100, ids in call order
                    batch.clear();
                }
            }
        }
    }

    /** Records deliveries per key and fails the test's check when a key's sequence goes backwards or runs twice at once. */
    static final class Checker {
        final Map<String, Integer> lastSeq = new ConcurrentHashMap<>();
        final Map<String, String> running = new ConcurrentHashMap<>();
        final Set<Long> handled = ConcurrentHashMap.newKeySet();
        final AtomicInteger deliveries = new AtomicInteger();
        final List<String> violations = new CopyOnWriteArrayList<>();

        Outcome handle(String member, Message<String> m) {
            deliveries.incrementAndGet();
            String key = m.messageKey();
            String other = running.putIfAbsent(key, member);
            if (other != null) {
                violations.add("key " + key + " ran in " + member + " while running in " + other);
            }
            try {
                int seq = Integer.parseInt(m.payload().substring(m.payload().indexOf(':') + 1));
                Integer last = lastSeq.get(key);
                if (last != null && seq < last) {
                    violations.add("key " + key + ": " + seq + " after " + last + " in " + member + " id " + m.id() + " attempt " + m.attempt());
                }
                lastSeq.merge(key, seq, Math::max);
                handled.add(m.id());
                return Outcome.success();
            } finally {
                running.remove(key, member);
            }
        }
    }

    @Test
    void registrationCreatesTheBucketsAndRefusesAnotherCount() {
        GroupInfo info = group(sluice, "part.reg", "g", GroupConfig.builder().partitions(8).build()).get().orElseThrow();
        assertThat(info.config().partitions()).isEqualTo(8);
        assertThat(info.config().concurrency()).isEqualTo(ConcurrencyPolicy.ORDERED);
        assertThat(scalar("SELECT count(*) FROM " + q() + ".shard_lease WHERE consumer_group_id = ? AND shard_count = 8",
                info.id())).isEqualTo(8);
        ConsumerGroup<String> g = sluice.stream("part.reg", String.class).consumerGroup("g");
        assertThat(g.partitions()).hasSize(8).allSatisfy(p -> assertThat(p.position()).isZero());
        g.register(GroupConfig.builder().partitions(8).build()); // the same count: fine
        assertThatThrownBy(() -> g.register(GroupConfig.builder().partitions(4).build()))
                .isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.PARTITIONS_MISMATCH));
        assertThatThrownBy(() -> g.register(GroupConfig.defaults()))
                .isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.PARTITIONS_MISMATCH));
        assertThat(g.get().orElseThrow().config().partitions()).isEqualTo(8);
        ConsumerGroup<String> plain = sluice.stream("part.reg", String.class).consumerGroup("plain");
        plain.register();
        assertThatThrownBy(() -> plain.register(GroupConfig.builder().partitions(2).build()))
                .isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.PARTITIONS_MISMATCH));
        assertThat(plain.partitions()).isEmpty();
        // A group starting at the head starts every bucket there.
        produce(sluice, "part.reg", 5, 5);
        ConsumerGroup<String> late = sluice.stream("part.reg", String.class).consumerGroup("late");
        late.register(GroupConfig.builder().partitions(3).start(dev.sluice.StartPosition.head()).build());
        assertThat(late.partitions()).hasSize(3).allSatisfy(p -> assertThat(p.position()).isEqualTo(5));
        for (int bad : new int[] {-1, GroupConfig.MAX_PARTITIONS + 1}) {
            assertThatThrownBy(() -> GroupConfig.builder().partitions(bad).build())
                    .isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_CONFIG));
        }
        assertThatThrownBy(() -> GroupConfig.builder().partitions(4).concurrency(ConcurrencyPolicy.PARALLEL).build())
                .isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_CONFIG));
    }

    @Test
    void oneMemberTakesEveryBucketAndDeliversEachMessageOnceInKeyOrder() {
        ConsumerGroup<String> g = group(sluice, "part.one", "g", GroupConfig.builder().partitions(8).build());
        produce(sluice, "part.one", 600, 40);
        try (Producer<String> p = sluice.stream("part.one", String.class).producer()) {
            for (int i = 0; i < 20; i++) {
                p.produce("keyless:" + i); // keyless: bucket id % 8, no order among them
            }
        }
        Checker check = new Checker();
        AtomicInteger keyless = new AtomicInteger();
        try (Consumption c = g.consume(m -> {
            if (m.messageKey() == null) {
                keyless.incrementAndGet();
                return Outcome.success();
            }
            return check.handle("a", m);
        }, OPTS)) {
            await().atMost(Duration.ofSeconds(30)).until(() -> check.handled.size() == 600 && keyless.get() == 20);
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(g.partitions())
                    .allSatisfy(p -> assertThat(p.position()).isEqualTo(620)));
            List<PartitionInfo> parts = g.partitions();
            assertThat(parts).extracting(PartitionInfo::bucket).containsExactly(0, 1, 2, 3, 4, 5, 6, 7);
            assertThat(parts).allSatisfy(p -> {
                assertThat(p.ownedAt(Instant.now())).isTrue();
                assertThat(p.ownerInstanceId()).isPositive();
                assertThat(p.lag()).isZero();
            });
            GroupInfo info = g.get().orElseThrow();
            assertThat(info.committed()).isEqualTo(620);
            assertThat(info.lag()).isZero();
        }
        assertThat(check.violations).isEmpty();
        assertThat(check.deliveries.get()).isEqualTo(600);
        // A clean close gives every bucket back at once.
        assertThat(g.partitions()).allSatisfy(p -> assertThat(p.ownedAt(Instant.now())).isFalse());
        assertThat(scalar("SELECT count(*) FROM " + q() + ".shard_lease WHERE owner_token IS NOT NULL AND consumer_group_id = ?",
                g.get().orElseThrow().id())).isZero();
    }

    @Test
    void aBucketGoesWhereTheSqlHashSendsIt() {
        ConsumerGroup<String> g = group(sluice, "part.hash", "g", GroupConfig.builder().partitions(5).build());
        produce(sluice, "part.hash", 50, 50);
        Map<Long, String> keys = new ConcurrentHashMap<>();
        try (Consumption c = g.consume(m -> {
            keys.put(m.id(), m.messageKey());
            return Outcome.success();
        }, OPTS)) {
            await().atMost(Duration.ofSeconds(20)).until(() -> keys.size() == 50);
        }
        // Every bucket's position is the highest id of its keys (computed here with the seed's formula in SQL).
        long sid = sluice.stream("part.hash").get().orElseThrow().id();
        for (PartitionInfo p : g.partitions()) {
            long highest = scalar("SELECT coalesce(max(id), 0) FROM " + q() + ".message_log_" + sid
                    + " WHERE ((hashtextextended(message_key, 0) % 5) + 5) % 5 = ?", p.bucket());
            assertThat(p.position()).as("bucket %d", p.bucket()).isGreaterThanOrEqualTo(highest);
        }
    }

    @Test
    void retriesKeepKeyOrderAndADeadMessageReleasesItsSuccessors() {
        ConsumerGroup<String> g = group(sluice, "part.retry", "g",
                GroupConfig.builder().partitions(4).retry(QUICK.withMaxAttempts(3)).build());
        produce(sluice, "part.retry", 200, 10);
        Checker check = new Checker();
        Map<Long, AtomicInteger> attempts = new ConcurrentHashMap<>();
        try (Consumption c = g.consume(m -> {
            int a = attempts.computeIfAbsent(m.id(), id -> new AtomicInteger()).incrementAndGet();
            int seq = Integer.parseInt(m.payload().substring(m.payload().indexOf(':') + 1));
            if (seq == 3 && m.messageKey().equals("k1")) {
                return Outcome.terminal("poison"); // dead at once: the rest of k1 goes on
            }
            if (seq % 5 == 2 && a < 2) {
                return Outcome.retry(); // once: the key's next messages wait for it
            }
            return check.handle("a", m);
        }, OPTS)) {
            await().atMost(Duration.ofSeconds(40)).until(() -> check.handled.size() == 199);
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(g.get().orElseThrow().committed()).isEqualTo(200));
        }
        assertThat(check.violations).isEmpty();
        assertThat(g.admin().deadLetters(null, 10).items()).hasSize(1);
        // The delivery log (the stream's default mode: failures) has the retries and the death.
        long sid = sluice.stream("part.retry").get().orElseThrow().id();
        long gid = g.get().orElseThrow().id();
        assertThat(scalar("SELECT count(*) FROM " + q() + ".delivery_log_" + sid + " WHERE consumer_group_id = ? AND status = 'failed'",
                gid)).isEqualTo(40);
        assertThat(scalar("SELECT count(*) FROM " + q() + ".delivery_log_" + sid + " WHERE consumer_group_id = ? AND status = 'dead'",
                gid)).isEqualTo(1);
        GroupInfo info = g.get().orElseThrow();
        assertThat(info.ready() + info.deferred() + info.inflight()).isZero();
        // Redriven, the dead letter runs again (as a row of its bucket's owner) and resolves.
        long dead = g.admin().deadLetters(null, 10).items().get(0).messageId();
        assertThat(g.admin().redriveAll()).isEqualTo(1);
        Set<Long> again = ConcurrentHashMap.newKeySet();
        try (Consumption c = g.consume(m -> {
            again.add(m.id());
            return Outcome.success();
        }, OPTS)) {
            await().atMost(Duration.ofSeconds(20)).until(() -> again.contains(dead));
            await().atMost(Duration.ofSeconds(10)).until(() -> g.get().orElseThrow().ready() == 0);
        }
        assertThat(again).containsExactly(dead);
        assertThat(g.admin().deadLetters(null, 10).items()).isEmpty();
    }

    @Test
    void membersShareTheBucketsAndNoKeyRunsInTwoAtOnce() {
        ConsumerGroup<String> g = group(sluice, "part.share", "g", GroupConfig.builder().partitions(8).build());
        Checker check = new Checker();
        try (Sluice second = client(database, "two")) {
            ConsumerGroup<String> g2 = second.stream("part.share", String.class).consumerGroup("g");
            try (Consumption a = g.consume(m -> check.handle("a", m), OPTS)) {
                await().atMost(Duration.ofSeconds(10)).until(() -> owners(g).size() == 1 && ownedCount(g) == 8);
                produce(sluice, "part.share", 300, 30);
                try (Consumption b = g2.consume(m -> check.handle("b", m), OPTS)) {
                    // The first sheds to its fair share once its in-flight work is committed; the second takes the rest.
                    await().atMost(Duration.ofSeconds(20)).until(() -> owners(g).size() == 2 && ownedCount(g) == 8);
                    assertThat(owners(g).values()).containsOnly(4L);
                    produce(sluice, "part.share", 300, 300, 30);
                    await().atMost(Duration.ofSeconds(30)).until(() -> check.handled.size() == 600);
                }
                // The second closed cleanly: the first takes its buckets back.
                await().atMost(Duration.ofSeconds(10)).until(() -> owners(g).size() == 1 && ownedCount(g) == 8);
            }
        }
        assertThat(check.violations).isEmpty();
        assertThat(check.deliveries.get()).as("no completed message ran twice").isEqualTo(600);
    }

    /** Owning instance → number of buckets it holds live. */
    static Map<Long, Long> owners(ConsumerGroup<String> g) {
        Map<Long, Long> out = new java.util.HashMap<>();
        for (PartitionInfo p : g.partitions()) {
            if (p.ownedAt(Instant.now())) {
                out.merge(p.ownerInstanceId(), 1L, Long::sum);
            }
        }
        return out;
    }

    static long ownedCount(ConsumerGroup<String> g) {
        return g.partitions().stream().filter(p -> p.ownedAt(Instant.now())).count();
    }

    @Test
    void rewindMovesEveryBucketAndDeliversAgain() {
        ConsumerGroup<String> g = group(sluice, "part.rewind", "g", GroupConfig.builder().partitions(3).build());
        produce(sluice, "part.rewind", 30, 6);
        AtomicInteger seen = new AtomicInteger();
        try (Consumption c = g.consume(m -> {
            seen.incrementAndGet();
            return Outcome.success();
        }, OPTS)) {
            await().atMost(Duration.ofSeconds(20)).until(() -> g.get().orElseThrow().committed() == 30);
        }
        assertThatThrownBy(() -> {
            try (Consumption c = g.consume(m -> Outcome.success(), OPTS)) {
                g.admin().rewindToId(11, false);
            }
        }).isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INSTANCES_LIVE));
        GroupInfo after = g.admin().rewindToId(11, false);
        assertThat(after.committed()).isEqualTo(10);
        assertThat(g.partitions()).allSatisfy(p -> assertThat(p.position()).isEqualTo(10));
        Set<Long> again = ConcurrentHashMap.newKeySet();
        try (Consumption c = g.consume(m -> {
            again.add(m.id());
            return Outcome.success();
        }, OPTS)) {
            await().atMost(Duration.ofSeconds(20)).until(() -> again.size() == 20);
        }
        assertThat(again).allSatisfy(id -> assertThat(id).isGreaterThan(10));
    }

    @Test
    void repartitionNeedsAPausedGroupAndStartsEveryBucketAtTheLowestPosition() {
        ConsumerGroup<String> g = group(sluice, "part.repart", "g", GroupConfig.builder().partitions(4).build());
        produce(sluice, "part.repart", 40, 8);
        try (Consumption c = g.consume(m -> Outcome.success(), OPTS)) {
            await().atMost(Duration.ofSeconds(20)).until(() -> g.get().orElseThrow().committed() == 40);
        }
        assertThatThrownBy(() -> g.admin().repartition(8))
                .isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INSTANCES_LIVE));
        sluice.fleet().setTarget("consumer:part.repart/g", 0);
        assertThatThrownBy(() -> g.admin().repartition(0))
                .isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_CONFIG));
        GroupInfo info = g.admin().repartition(8);
        assertThat(info.config().partitions()).isEqualTo(8);
        assertThat(g.partitions()).hasSize(8).allSatisfy(p -> assertThat(p.position()).isEqualTo(40));
        g.register(GroupConfig.builder().partitions(8).build()); // the new count is the stored one now
        sluice.fleet().setTarget("consumer:part.repart/g", -1);
        produce(sluice, "part.repart", 16, 8);
        Set<Long> seen = ConcurrentHashMap.newKeySet();
        try (Consumption c = g.consume(m -> {
            seen.add(m.id());
            return Outcome.success();
        }, OPTS)) {
            await().atMost(Duration.ofSeconds(20)).until(() -> seen.size() == 16);
        }
        ConsumerGroup<String> plain = group(sluice, "part.repart", "plain", GroupConfig.defaults());
        sluice.fleet().setTarget("consumer:part.repart/plain", 0);
        assertThatThrownBy(() -> plain.admin().repartition(2))
                .isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_CONFIG));
    }

    @Test
    void aDelayedMessageHoldsItsKeysSuccessorsAndBindingsStillFilter() {
        ConsumerGroup<String> g = group(sluice, "part.delay", "g",
                GroupConfig.builder().partitions(2).bindings("eu.*").retry(QUICK).build());
        try (Producer<String> p = sluice.stream("part.delay", String.class).producer()) {
            p.produce("k:0", ProduceOptions.builder().messageKey("k").routingKey("eu.a").build());
            p.produce("k:1", ProduceOptions.builder().messageKey("k").routingKey("us.a").build()); // not bound: skipped
            p.produce("k:2", ProduceOptions.builder().messageKey("k").routingKey("eu.b").build());
        }
        List<String> order = new CopyOnWriteArrayList<>();
        AtomicInteger first = new AtomicInteger();
        try (Consumption c = g.consume(m -> {
            if (m.payload().equals("k:0") && first.getAndIncrement() == 0) {
                return Outcome.delay(Duration.ofMillis(300));
            }
            order.add(m.payload());
            return Outcome.success();
        }, OPTS)) {
            await().atMost(Duration.ofSeconds(20)).until(() -> order.size() == 2);
            assertThat(c.stats().skippedFiltered()).isEqualTo(1);
        }
        assertThat(order).containsExactly("k:0", "k:2");
    }
}
