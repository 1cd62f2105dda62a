package dev.sluice.maint;

import static dev.sluice.maint.JanitorFixture.removed;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.ConsumeOptions;
import dev.sluice.Consumption;
import dev.sluice.GroupConfig;
import dev.sluice.Outcome;
import dev.sluice.Outgoing;
import dev.sluice.ProduceOptions;
import dev.sluice.Produced;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.StartPosition;
import dev.sluice.StreamConfig;
import dev.sluice.SweepResult;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.internal.maint.Janitor;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Retention drops whole log partitions — old, committed by every group, free of exception rows, below the head's —
 * and keeps every other one. Partitions of 100 ids: message n lies in partition n / 100.
 */
@SluiceTest
class RetentionTest {
    static Sluice sluice;
    static JanitorFixture fx;

    @BeforeAll
    static void setUp(TestDatabase db) {
        fx = new JanitorFixture(db);
        sluice = fx.client();
    }

    @AfterAll
    static void tearDown() {
        sluice.close();
        fx.close();
    }

    /** A stream of 100-id partitions with one-hour retention and {@code n} messages (ids 1..n), all two hours old. */
    private static long oldStream(String name, int n, boolean allowDropPastCommitted) {
        long id = sluice.stream(name).register(StreamConfig.builder().partitionSize(100).retention(Duration.ofHours(1))
                .allowDropPastCommitted(allowDropPastCommitted).build()).id();
        produce(name, n);
        age(id, "true", "2 hours");
        return id;
    }

    private static void produce(String stream, int n) {
        List<Outgoing<String>> batch = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
            batch.add(Outgoing.of("m" + i, ProduceOptions.NONE));
        }
        try (Producer<String> p = sluice.stream(stream, String.class).producer()) {
            p.produceBatch(batch);
        }
    }

    private static void age(long id, String where, String age) {
        fx.db.execute("UPDATE " + fx.table("message_log", id) + " SET created_at = now() - interval '" + age + "' WHERE " + where);
    }

    /** Opens a transaction on {@code reader} that reads the log (and so holds it until commit); checks its count. */
    private static void holdTheLog(Connection reader, long id, long expected) throws java.sql.SQLException {
        reader.setAutoCommit(false);
        try (Statement s = reader.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*) FROM " + fx.table("message_log", id))) {
            rs.next();
            assertThat(rs.getLong(1)).isEqualTo(expected);
        }
    }

    private static String part(long id, long k) {
        return "message_log_" + id + "_" + k;
    }

    /** The partitions 0..k-1 of the log that exist, among the first {@code k}. */
    private static List<String> low(long id, int k) {
        List<String> all = fx.partitions(id);
        List<String> out = new ArrayList<>();
        for (int i = 0; i < k; i++) {
            if (all.contains(part(id, i))) {
                out.add(part(id, i));
            }
        }
        return out;
    }

    @Test
    void dropsOldCommittedPartitionsAndKeepsThoseAGroupHasNotCommittedTheHeadsAndAhead() {
        long id = oldStream("behind", 550, false);
        // 'done' has committed everything, 'late' only up to 250: partitions 0 and 1 lie below both.
        sluice.stream("behind").consumerGroup("done").register(GroupConfig.builder().start(StartPosition.atId(551)).build());
        sluice.stream("behind").consumerGroup("late").register(GroupConfig.builder().start(StartPosition.atId(251)).build());

        List<SweepResult> pass = fx.janitor().sweep();
        assertThat(removed(pass, Janitor.RETENTION)).isEqualTo(2);
        assertThat(low(id, 6)).containsExactly(part(id, 2), part(id, 3), part(id, 4), part(id, 5));
        assertThat(fx.scalar("SELECT min(id) FROM " + fx.table("message_log", id))).isEqualTo(200);
        assertThat(fx.scalar("SELECT count(*) FROM " + fx.table("message_log", id))).isEqualTo(351);

        // 'late' moves on to 450: partitions 2 and 3 go; 4 holds 451..499, not yet committed by 'late'; 5 holds the head.
        sluice.stream("behind").consumerGroup("late").admin().rewindToId(451, false);
        assertThat(removed(fx.janitor().sweep(), Janitor.RETENTION)).isEqualTo(2);
        assertThat(low(id, 6)).containsExactly(part(id, 4), part(id, 5));
        // Both groups done: still never the head's partition (all its messages are old too) nor any ahead.
        sluice.stream("behind").consumerGroup("late").admin().rewindToId(551, false);
        List<SweepResult> last = fx.janitor().sweep();
        assertThat(removed(last, Janitor.RETENTION)).isEqualTo(1);
        assertThat(removed(last, Janitor.PARTITIONS_AHEAD)).as("dropped partitions are not re-created").isZero();
        assertThat(low(id, 6)).containsExactly(part(id, 5));
        // What is left is the head's partition and every one ahead of it, without a hole.
        List<String> left = fx.partitions(id);
        for (int k = 0; k < left.size(); k++) {
            assertThat(left.get(k)).isEqualTo(part(id, 5 + k));
        }
        assertThat(left.size()).isGreaterThan(10);
        assertThat(fx.scalar("SELECT count(*) FROM " + fx.table("message_log", id))).isEqualTo(51); // 500..550
        // Producing goes on across the dropped range: the next id lands in the head's partition.
        Produced next = sluice.stream("behind", String.class).producer().produce("after");
        assertThat(next.id()).isEqualTo(551);
    }

    @Test
    void youngPartitionsStayAndTheJanitorWaitsUntilTheyCanHaveAgedOut() {
        long id = oldStream("young", 350, false);
        age(id, "id >= 200", "30 minutes"); // partitions 2 and 3 are within the retention
        Janitor janitor = fx.janitor();
        assertThat(removed(janitor.sweep(), Janitor.RETENTION)).isEqualTo(2);
        assertThat(low(id, 4)).containsExactly(part(id, 2), part(id, 3));
        // Nothing can age out for another half hour: the next passes do not look at the stream's partitions again.
        var info = sluice.stream("young").get().orElseThrow();
        assertThat(janitor.skips(info, 350, java.time.Instant.now()).orElseThrow().retention()).isTrue();
        int before = fx.statements.get();
        assertThat(removed(janitor.sweep(), Janitor.RETENTION)).isZero();
        assertThat(janitor.skips(info, 350, java.time.Instant.now().plus(Duration.ofMinutes(31))).orElseThrow().retention())
                .as("due again once partition 2 can have aged out").isFalse();
        assertThat(fx.statements.get() - before).isLessThan(10);
    }

    @Test
    void exceptionRowsKeepTheirPartitionsUntilResolvedAndDeadLettersUntilPurged() {
        long id = oldStream("pinned", 550, false);
        // 'picky' consumes everything: message 150 becomes a dead letter, 330 a retry due in an hour, the rest succeed.
        sluice.stream("pinned", String.class).consumerGroup("picky").register();
        Set<Long> seen = ConcurrentHashMap.newKeySet();
        try (Consumption c = sluice.stream("pinned", String.class).consumerGroup("picky").consume(m -> {
            seen.add(m.id());
            return m.id() == 150 ? Outcome.terminal("poison") : m.id() == 330 ? Outcome.retry(Duration.ofHours(1)) : Outcome.success();
        }, ConsumeOptions.defaults().withBatchSize(64))) {
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                var g = sluice.stream("pinned").consumerGroup("picky").get().orElseThrow();
                return g.committed() == 550 && g.dead() == 1 && g.ready() == 1;
            });
        }
        assertThat(removed(fx.janitor().sweep(), Janitor.RETENTION)).as("partitions 0, 2 and 4").isEqualTo(3);
        assertThat(low(id, 6)).containsExactly(part(id, 1), part(id, 3), part(id, 5));
        assertThat(fx.scalar("SELECT count(*) FROM " + fx.table("message_log", id) + " WHERE id IN (150, 330)")).isEqualTo(2);

        // The dead letter keeps its partition until purged; the retry keeps its own until it is resolved.
        assertThat(sluice.stream("pinned").consumerGroup("picky").admin().purgeAll()).isEqualTo(1);
        assertThat(removed(fx.janitor().sweep(), Janitor.RETENTION)).isEqualTo(1);
        assertThat(low(id, 6)).containsExactly(part(id, 3), part(id, 5));
        fx.db.execute("DELETE FROM " + fx.table("exception_queue", id) + " WHERE message_id = 330"); // as if it succeeded
        assertThat(removed(fx.janitor().sweep(), Janitor.RETENTION)).isEqualTo(1);
        assertThat(low(id, 6)).containsExactly(part(id, 5));
    }

    @Test
    void allowDropPastCommittedPassesAGroupBehindButNeverExceptionRows() {
        long id = oldStream("allowed", 550, true);
        sluice.stream("allowed").consumerGroup("stalled").register(GroupConfig.builder().start(StartPosition.atId(60)).build());
        sluice.stream("allowed", String.class).consumerGroup("strict").register();
        try (Consumption c = sluice.stream("allowed", String.class).consumerGroup("strict")
                .consume(m -> m.id() == 350 ? Outcome.terminal("poison") : Outcome.success())) {
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                var g = sluice.stream("allowed").consumerGroup("strict").get().orElseThrow();
                return g.committed() == 550 && g.dead() == 1;
            });
        }
        assertThat(removed(fx.janitor().sweep(), Janitor.RETENTION)).isEqualTo(4);
        assertThat(low(id, 6)).containsExactly(part(id, 3), part(id, 5));
        // The group behind claims past the missing ids and goes on with what is left (300..399, 500..550).
        Set<Long> got = ConcurrentHashMap.newKeySet();
        try (Consumption c = sluice.stream("allowed", String.class).consumerGroup("stalled").consume(m -> {
            got.add(m.id());
            return Outcome.success();
        })) {
            await().atMost(Duration.ofSeconds(30)).until(() ->
                    sluice.stream("allowed").consumerGroup("stalled").get().orElseThrow().committed() == 550);
        }
        assertThat(got).hasSize(151).allSatisfy(m -> assertThat(m >= 300 && m < 400 || m >= 500).isTrue());
        // The same stream without the permission would have kept everything 'stalled' has not committed.
        long strict = oldStream("not-allowed", 550, false);
        sluice.stream("not-allowed").consumerGroup("stalled").register(GroupConfig.builder().start(StartPosition.atId(60)).build());
        assertThat(removed(fx.janitor().sweep(), Janitor.RETENTION)).isZero();
        assertThat(low(strict, 6)).hasSize(6);
    }

    @Test
    void aProducerTransactionOpenAcrossTheSweepLosesNothing(TestDatabase db) throws Exception {
        long id = oldStream("open-producer", 250, false);
        Producer<String> p = sluice.stream("open-producer", String.class).producer();
        Janitor janitor = fx.janitor();
        long late;
        try (Connection producer = db.connect()) {
            producer.setAutoCommit(false);
            late = p.produceInTransaction(producer, "late", ProduceOptions.NONE).id();
            List<SweepResult> pass = janitor.sweep();
            assertThat(JanitorFixture.result(pass, Janitor.RETENTION).ok()).isTrue();
            assertThat(JanitorFixture.result(pass, Janitor.RETENTION).removed()).isZero();
            assertThat(low(id, 3)).hasSize(3);
            producer.commit();
        }
        assertThat(late).isEqualTo(251);
        // The late message is there and delivered.
        sluice.stream("open-producer", String.class).consumerGroup("reader")
                .register(GroupConfig.builder().start(StartPosition.atId(251)).build());
        Set<String> got = ConcurrentHashMap.newKeySet();
        try (Consumption c = sluice.stream("open-producer", String.class).consumerGroup("reader").consume(m -> {
            got.add(m.payload());
            return Outcome.success();
        })) {
            await().atMost(Duration.ofSeconds(30)).until(() -> got.contains("late"));
        }
        // Once it committed, the same janitor drops the old partitions at its next pass; the head's stays.
        assertThat(removed(janitor.sweep(), Janitor.RETENTION)).isEqualTo(2);
        assertThat(low(id, 3)).containsExactly(part(id, 2));
        assertThat(fx.strings("SELECT payload FROM " + fx.table("message_log", id) + " WHERE id = 251")).hasSize(1);
    }

    @Test
    void aBusyLogLockSkipsTheDropUntilTheNextPassAndBlocksNobodyForLong(TestDatabase db) throws Exception {
        long id = oldStream("busy", 250, false);
        Janitor janitor = fx.janitor();
        try (Connection reader = db.connect()) {
            holdTheLog(reader, id, 250);
            // The reader's transaction holds the log: the drop times out on its lock and is skipped, not an error.
            long start = System.nanoTime();
            List<SweepResult> pass = janitor.sweep();
            assertThat(JanitorFixture.result(pass, Janitor.RETENTION).ok()).isTrue();
            assertThat(JanitorFixture.result(pass, Janitor.RETENTION).removed()).isZero();
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
            assertThat(low(id, 3)).hasSize(3);
            // Meanwhile producers are not blocked: the janitor gave the lock up.
            assertThat(sluice.stream("busy", String.class).producer().produce("during").id()).isEqualTo(251);
            reader.commit();
        }
        assertThat(removed(janitor.sweep(), Janitor.RETENTION)).isEqualTo(2);
        assertThat(low(id, 3)).containsExactly(part(id, 2));
    }

    @Test
    void overlappingProducerTransactionsDoNotHoldRetentionBackAndItsDetachBlocksNobody(TestDatabase db) throws Exception {
        long id = oldStream("overlap", 250, false);
        Producer<String> p = sluice.stream("overlap", String.class).producer();
        Janitor janitor = fx.janitor();
        try (Connection a = db.connect(); Connection b = db.connect()) {
            a.setAutoCommit(false);
            b.setAutoCommit(false);
            p.produceInTransaction(a, "a", ProduceOptions.NONE);
            assertThat(removed(janitor.sweep(), Janitor.RETENTION)).as("while a holds the observation").isZero();
            // b begins before a ends and stays open across the next pass: under producers whose transactions
            // overlap, some transaction is always open, but the observation of the last pass waits for a alone.
            p.produceInTransaction(b, "b", ProduceOptions.NONE);
            a.commit();
            java.util.concurrent.CompletableFuture<List<SweepResult>> pass =
                    java.util.concurrent.CompletableFuture.supplyAsync(janitor::sweep);
            // The concurrent detach waits for b, the transaction using the log when it began...
            await().atMost(Duration.ofSeconds(4)).until(() -> fx.scalar("SELECT count(*) FROM pg_stat_activity"
                    + " WHERE query LIKE 'ALTER TABLE%DETACH PARTITION%CONCURRENTLY' AND wait_event_type = 'Lock'") == 1);
            // ...and blocks no one meanwhile: producers write, readers read.
            long during = p.produce("during").id();
            assertThat(during).isEqualTo(253);
            assertThat(fx.scalar("SELECT count(*) FROM " + fx.table("message_log", id) + " WHERE id >= 200")).isEqualTo(53);
            assertThat(pass.isDone()).as("the pass still waits for b").isFalse();
            b.commit();
            assertThat(removed(pass.get(), Janitor.RETENTION)).isEqualTo(2);
        }
        assertThat(low(id, 3)).containsExactly(part(id, 2));
    }

    @Test
    void aDetachCutShortIsCompletedAndADetachedLeftoverDroppedAtTheNextPass(TestDatabase db) throws Exception {
        long id = oldStream("cut-short", 350, false);
        Janitor janitor = fx.janitor();
        // A partition a janitor detached but did not drop (it died in between): attached to nothing, still there.
        fx.db.execute("ALTER TABLE " + fx.table("message_log", id) + " DETACH PARTITION " + fx.table("message_log", id) + "_0");
        try (Connection reader = db.connect()) {
            holdTheLog(reader, id, 251);
            // The reader's transaction uses the log: the concurrent detach of partition 1 waits for it, runs out of
            // time and leaves the partition detach-pending — out of every query from then on.
            assertThat(removed(janitor.sweep(), Janitor.RETENTION)).isZero();
            assertThat(fx.scalar("SELECT count(*) FROM pg_inherits WHERE inhdetachpending AND inhrelid = to_regclass(?)",
                    fx.table("message_log", id) + "_1")).isEqualTo(1);
            reader.commit();
        }
        assertThat(fx.scalar("SELECT count(*) FROM pg_class WHERE oid = to_regclass(?)", fx.table("message_log", id) + "_0"))
                .as("the leftover, dropped by that pass").isZero();
        assertThat(fx.scalar("SELECT count(*) FROM " + fx.table("message_log", id))).isEqualTo(151);
        // The next pass completes the pending detach, drops it, and goes on.
        assertThat(removed(janitor.sweep(), Janitor.RETENTION)).isEqualTo(2);
        assertThat(low(id, 4)).containsExactly(part(id, 3));
    }

    @Test
    void aRewindInProgressHoldsRetentionOffTheStream(TestDatabase db) throws Exception {
        long id = oldStream("rewinding", 250, false);
        String key = new dev.sluice.internal.schema.FamilyTables("\"" + db.schema() + "\"", id).retentionLockKey();
        Janitor janitor = fx.janitor();
        try (Connection rewind = db.connect()) {
            rewind.setAutoCommit(false);
            try (java.sql.PreparedStatement ps = rewind.prepareStatement("SELECT pg_advisory_xact_lock_shared(hashtextextended(?, 0))")) {
                ps.setString(1, key); // what a rewind takes first
                ps.execute();
            }
            assertThat(removed(janitor.sweep(), Janitor.RETENTION)).isZero();
            assertThat(low(id, 3)).hasSize(3);
            rewind.commit();
        }
        assertThat(removed(janitor.sweep(), Janitor.RETENTION)).isEqualTo(2);
    }

    @Test
    void streamsWithoutRetentionKeepEverything() {
        long id = sluice.stream("forever").register(StreamConfig.builder().partitionSize(100).build()).id();
        produce("forever", 250);
        age(id, "true", "300 days");
        fx.janitor().sweep();
        assertThat(low(id, 3)).hasSize(3);
        assertThat(fx.scalar("SELECT count(*) FROM " + fx.table("message_log", id))).isEqualTo(250);
    }
}
