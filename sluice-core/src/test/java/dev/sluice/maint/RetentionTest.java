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
 * and keeps every other one. Partitions of 10 ids: message n lies in partition n / 10.
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

    /** A stream of 10-id partitions with one-hour retention and {@code n} messages (ids 1..n), all two hours old. */
    private static long oldStream(String name, int n, boolean allowDropPastCommitted) {
        long id = sluice.stream(name).register(StreamConfig.builder().partitionSize(10).retention(Duration.ofHours(1))
                .allowDropPastCommitted(allowDropPastCommitted).build()).id();
        List<Outgoing<String>> batch = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
            batch.add(Outgoing.of("m" + i, ProduceOptions.NONE));
        }
        try (Producer<String> p = sluice.stream(name, String.class).producer()) {
            p.produceBatch(batch);
        }
        age(id, "true", "2 hours");
        return id;
    }

    private static void age(long id, String where, String age) {
        fx.db.execute("UPDATE " + fx.table("message_log", id) + " SET created_at = now() - interval '" + age + "' WHERE " + where);
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
        long id = oldStream("behind", 55, false);
        // 'done' has committed everything, 'late' only up to 25: partitions 0 and 1 lie below both.
        sluice.stream("behind").consumerGroup("done").register(GroupConfig.builder().start(StartPosition.atId(56)).build());
        sluice.stream("behind").consumerGroup("late").register(GroupConfig.builder().start(StartPosition.atId(26)).build());

        List<SweepResult> pass = fx.janitor().sweep();
        assertThat(removed(pass, Janitor.RETENTION)).isEqualTo(2);
        assertThat(low(id, 6)).containsExactly(part(id, 2), part(id, 3), part(id, 4), part(id, 5));
        assertThat(fx.scalar("SELECT min(id) FROM " + fx.table("message_log", id))).isEqualTo(20);
        assertThat(fx.scalar("SELECT count(*) FROM " + fx.table("message_log", id))).isEqualTo(36);

        // 'late' moves on to 45: partitions 2 and 3 go; 4 holds 46..49, not yet committed by 'late'; 5 holds the head.
        sluice.stream("behind").consumerGroup("late").admin().rewindToId(46, false);
        assertThat(removed(fx.janitor().sweep(), Janitor.RETENTION)).isEqualTo(2);
        assertThat(low(id, 6)).containsExactly(part(id, 4), part(id, 5));
        // Both groups done: still never the head's partition (all its messages are old too) nor any ahead.
        sluice.stream("behind").consumerGroup("late").admin().rewindToId(56, false);
        List<SweepResult> last = fx.janitor().sweep();
        assertThat(removed(last, Janitor.RETENTION)).isEqualTo(1);
        assertThat(removed(last, Janitor.PARTITIONS_AHEAD)).as("dropped partitions are not re-created").isZero();
        assertThat(low(id, 6)).containsExactly(part(id, 5));
        // What is left is the head's partition and every one ahead of it, without a hole.
        List<String> left = fx.partitions(id);
        for (int k = 0; k < left.size(); k++) {
            assertThat(left.get(k)).isEqualTo(part(id, 5 + k));
        }
        assertThat(left.size()).isGreaterThan(100);
        assertThat(fx.scalar("SELECT count(*) FROM " + fx.table("message_log", id))).isEqualTo(6); // 50..55
        // Producing goes on across the dropped range: the next id lands in the head's partition.
        Produced next = sluice.stream("behind", String.class).producer().produce("after");
        assertThat(next.id()).isEqualTo(56);
    }

    @Test
    void youngPartitionsStayAndTheJanitorWaitsUntilTheyCanHaveAgedOut() {
        long id = oldStream("young", 35, false);
        age(id, "id >= 20", "30 minutes"); // partitions 2 and 3 are within the retention
        Janitor janitor = fx.janitor();
        assertThat(removed(janitor.sweep(), Janitor.RETENTION)).isEqualTo(2);
        assertThat(low(id, 4)).containsExactly(part(id, 2), part(id, 3));
        // Nothing can age out for another half hour: the next passes do not look at the stream's partitions again.
        var info = sluice.stream("young").get().orElseThrow();
        assertThat(janitor.skips(info, 35, java.time.Instant.now()).orElseThrow().retention()).isTrue();
        int before = fx.statements.get();
        assertThat(removed(janitor.sweep(), Janitor.RETENTION)).isZero();
        assertThat(janitor.skips(info, 35, java.time.Instant.now().plus(Duration.ofMinutes(31))).orElseThrow().retention())
                .as("due again once partition 2 can have aged out").isFalse();
        assertThat(fx.statements.get() - before).isLessThan(10);
    }

    @Test
    void exceptionRowsKeepTheirPartitionsUntilResolvedAndDeadLettersUntilPurged() {
        long id = oldStream("pinned", 55, false);
        age(id, "true", "2 hours");
        // 'picky' consumes everything: message 15 becomes a dead letter, 33 a retry due in an hour, the rest succeed.
        sluice.stream("pinned", String.class).consumerGroup("picky").register();
        Set<Long> seen = ConcurrentHashMap.newKeySet();
        try (Consumption c = sluice.stream("pinned", String.class).consumerGroup("picky").consume(m -> {
            seen.add(m.id());
            return m.id() == 15 ? Outcome.terminal("poison") : m.id() == 33 ? Outcome.retry(Duration.ofHours(1)) : Outcome.success();
        }, ConsumeOptions.defaults().withBatchSize(8))) {
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                var g = sluice.stream("pinned").consumerGroup("picky").get().orElseThrow();
                return g.committed() == 55 && g.dead() == 1 && g.ready() == 1;
            });
        }
        assertThat(removed(fx.janitor().sweep(), Janitor.RETENTION)).as("partitions 0, 2 and 4").isEqualTo(3);
        assertThat(low(id, 6)).containsExactly(part(id, 1), part(id, 3), part(id, 5));
        assertThat(fx.scalar("SELECT count(*) FROM " + fx.table("message_log", id) + " WHERE id IN (15, 33)")).isEqualTo(2);

        // The dead letter keeps its partition until purged; the retry keeps its own until it is resolved.
        assertThat(sluice.stream("pinned").consumerGroup("picky").admin().purgeAll()).isEqualTo(1);
        assertThat(removed(fx.janitor().sweep(), Janitor.RETENTION)).isEqualTo(1);
        assertThat(low(id, 6)).containsExactly(part(id, 3), part(id, 5));
        fx.db.execute("DELETE FROM " + fx.table("exception_queue", id) + " WHERE message_id = 33"); // as if it succeeded
        assertThat(removed(fx.janitor().sweep(), Janitor.RETENTION)).isEqualTo(1);
        assertThat(low(id, 6)).containsExactly(part(id, 5));
    }

    @Test
    void allowDropPastCommittedPassesAGroupBehindButNeverExceptionRows() {
        long id = oldStream("allowed", 55, true);
        sluice.stream("allowed").consumerGroup("stalled").register(GroupConfig.builder().start(StartPosition.atId(6)).build());
        sluice.stream("allowed", String.class).consumerGroup("strict").register();
        try (Consumption c = sluice.stream("allowed", String.class).consumerGroup("strict")
                .consume(m -> m.id() == 35 ? Outcome.terminal("poison") : Outcome.success())) {
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                var g = sluice.stream("allowed").consumerGroup("strict").get().orElseThrow();
                return g.committed() == 55 && g.dead() == 1;
            });
        }
        assertThat(removed(fx.janitor().sweep(), Janitor.RETENTION)).isEqualTo(4);
        assertThat(low(id, 6)).containsExactly(part(id, 3), part(id, 5));
        // The same stream without the permission would have kept everything 'stalled' has not committed.
        long strict = oldStream("not-allowed", 55, false);
        sluice.stream("not-allowed").consumerGroup("stalled").register(GroupConfig.builder().start(StartPosition.atId(6)).build());
        assertThat(removed(fx.janitor().sweep(), Janitor.RETENTION)).isZero();
        assertThat(low(strict, 6)).hasSize(6);
    }

    @Test
    void aProducerTransactionOpenAcrossTheSweepLosesNothing(TestDatabase db) throws Exception {
        long id = oldStream("open-producer", 25, false);
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
        assertThat(late).isEqualTo(26);
        // The late message is there and delivered.
        sluice.stream("open-producer", String.class).consumerGroup("reader")
                .register(GroupConfig.builder().start(StartPosition.atId(26)).build());
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
        assertThat(fx.strings("SELECT payload FROM " + fx.table("message_log", id) + " WHERE id = 26")).hasSize(1);
    }

    @Test
    void aBusyLogLockSkipsTheDropUntilTheNextPassAndBlocksNobodyForLong(TestDatabase db) throws Exception {
        long id = oldStream("busy", 25, false);
        Janitor janitor = fx.janitor();
        try (Connection reader = db.connect()) {
            reader.setAutoCommit(false);
            try (Statement s = reader.createStatement();
                 ResultSet rs = s.executeQuery("SELECT count(*) FROM " + fx.table("message_log", id))) {
                rs.next();
                assertThat(rs.getLong(1)).isEqualTo(25);
            }
            // The reader's transaction holds the log: the drop times out on its lock and is skipped, not an error.
            long start = System.nanoTime();
            List<SweepResult> pass = janitor.sweep();
            assertThat(JanitorFixture.result(pass, Janitor.RETENTION).ok()).isTrue();
            assertThat(JanitorFixture.result(pass, Janitor.RETENTION).removed()).isZero();
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
            assertThat(low(id, 3)).hasSize(3);
            // Meanwhile producers are not blocked: the janitor gave the lock up.
            assertThat(sluice.stream("busy", String.class).producer().produce("during").id()).isEqualTo(26);
            reader.commit();
        }
        assertThat(removed(janitor.sweep(), Janitor.RETENTION)).isEqualTo(2);
        assertThat(low(id, 3)).containsExactly(part(id, 2));
    }

    @Test
    void streamsWithoutRetentionKeepEverything() {
        long id = sluice.stream("forever").register(StreamConfig.builder().partitionSize(10).build()).id();
        Producer<String> p = sluice.stream("forever", String.class).producer();
        for (int i = 0; i < 25; i++) {
            p.produce("m" + i);
        }
        age(id, "true", "300 days");
        fx.janitor().sweep();
        assertThat(low(id, 3)).hasSize(3);
        assertThat(fx.scalar("SELECT count(*) FROM " + fx.table("message_log", id))).isEqualTo(25);
    }
}
