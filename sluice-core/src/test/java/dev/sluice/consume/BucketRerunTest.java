package dev.sluice.consume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.ConsumeOptions;
import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.GroupConfig;
import dev.sluice.Outcome;
import dev.sluice.ProduceOptions;
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
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A partitioned group counts the re-runs of a bucket (docs/partitions.md, "Re-runs and quarantine"): every fetch marks
 * the buckets it hands out (runs + 1, the highest id) before anything runs, a commit clears the mark, a member that
 * runs a marked bucket again delivers its messages as the next attempt, and one handed out more than
 * {@code maxRangeReclaims} times without a commit is quarantined as exception rows — in key order, nothing lost.
 */
@SluiceTest
class BucketRerunTest {
    private static final ConsumeOptions OPTS = ConsumeOptions.defaults().withPollInterval(Duration.ofMillis(20)).withBatchSize(20);

    /** The newest version of bucket 0's position: position, its run tops' count, the highest (-1 when none). */
    private static long[] bucket0(TestDatabase db, long sid, long gid) throws Exception {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement("SELECT position, cardinality(run_tops), coalesce((SELECT max(t) FROM unnest(run_tops) AS t), -1) FROM \""
                + db.schema() + "\".partition_cursor_" + sid + " WHERE consumer_group_id = ? AND bucket = 0 ORDER BY seq DESC LIMIT 1")) {
            ps.setLong(1, gid);
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).isTrue();
                return new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)};
            }
        }
    }

    private static long scalar(TestDatabase db, String sql, Object... args) throws Exception {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setObject(i + 1, args[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).isTrue();
                return rs.getLong(1);
            }
        }
    }

    /** Writes the next version of bucket 0's position as a holder that was handed messages and died would leave it. */
    private static void markAsDied(TestDatabase db, long sid, long gid, int runs, long runHigh) {
        String pc = "\"" + db.schema() + "\".partition_cursor_" + sid;
        db.execute("WITH cur AS (SELECT * FROM " + pc + " WHERE consumer_group_id = " + gid + " AND bucket = 0 ORDER BY seq DESC LIMIT 1),"
                + " ins AS (INSERT INTO " + pc + " (consumer_group_id, bucket, seq, position, run_tops)"
                + "   SELECT consumer_group_id, 0, seq + 1, position, array_fill(" + runHigh + "::bigint, ARRAY[" + runs + "]) FROM cur)"
                + " DELETE FROM " + pc + " p USING cur WHERE p.consumer_group_id = cur.consumer_group_id AND p.bucket = 0 AND p.seq = cur.seq");
    }

    private static List<Long> produce(Sluice sluice, String stream, String... keys) {
        List<Long> ids = new ArrayList<>();
        try (Producer<String> p = sluice.stream(stream, String.class).producer()) {
            for (int i = 0; i < keys.length; i++) {
                ids.add(p.produce("m" + i, keys[i] == null ? ProduceOptions.NONE : ProduceOptions.key(keys[i])).id());
            }
        }
        return ids;
    }

    @Test
    void aFetchMarksItsBucketBeforeItRunsAndTheCommitClearsTheMark(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(false).build()) {
            long sid = sluice.stream("rerun.mark").register().id();
            ConsumerGroup<String> g = sluice.stream("rerun.mark", String.class).consumerGroup("g");
            long gid = g.register(GroupConfig.builder().partitions(1).build()).id();
            List<Long> ids = produce(sluice, "rerun.mark", "a", "b", "a", "c", "b");
            CountDownLatch running = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            Map<Long, Integer> attempts = new ConcurrentHashMap<>();
            try (Consumption c = g.consume(m -> {
                attempts.put(m.id(), m.attempt());
                running.countDown();
                assertThat(release.await(20, TimeUnit.SECONDS)).isTrue();
                return Outcome.success();
            }, OPTS)) {
                assertThat(running.await(20, TimeUnit.SECONDS)).isTrue();
                // Handed out and running: the mark is stored, the position has not moved.
                long[] marked = bucket0(db, sid, gid);
                assertThat(marked[0]).isLessThan(ids.get(0));
                assertThat(marked[1]).isEqualTo(1);
                assertThat(marked[2]).isEqualTo(ids.get(4));
                release.countDown();
                await().atMost(Duration.ofSeconds(20)).until(() -> bucket0(db, sid, gid)[0] >= ids.get(4));
            }
            assertThat(attempts).hasSize(5).allSatisfy((id, attempt) -> assertThat(attempt).isEqualTo(1));
            // Committed: the position moved past everything handed out and the runs start again at 0.
            assertThat(bucket0(db, sid, gid)[1]).isZero();
            assertThat(bucket0(db, sid, gid)[2]).isEqualTo(-1);
        }
    }

    @Test
    void aBucketRunAgainAfterItsHolderDiedDeliversTheHandedOutMessagesAsTheNextAttempt(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(false).build()) {
            long sid = sluice.stream("rerun.attempt").register().id();
            ConsumerGroup<String> g = sluice.stream("rerun.attempt", String.class).consumerGroup("g");
            long gid = g.register(GroupConfig.builder().partitions(1).build()).id();
            List<Long> ids = produce(sluice, "rerun.attempt", "a", "b", "a", "b", "a", null);
            // A holder was handed out m0..m3 once and died before its commit.
            markAsDied(db, sid, gid, 1, ids.get(3));
            Map<Long, Integer> attempts = new ConcurrentHashMap<>();
            try (Consumption c = g.consume(m -> {
                attempts.put(m.id(), m.attempt());
                return Outcome.success();
            }, OPTS)) {
                await().atMost(Duration.ofSeconds(20)).until(() -> attempts.size() == 6 && bucket0(db, sid, gid)[0] >= ids.get(5));
            }
            for (int i = 0; i < 6; i++) {
                assertThat(attempts.get(ids.get(i))).as("attempt of m" + i).isEqualTo(i <= 3 ? 2 : 1);
            }
            assertThat(bucket0(db, sid, gid)).containsExactly(ids.get(5), 0, -1);
        }
    }

    @Test
    void aBucketHandedOutTooOftenIsQuarantinedAsRowsInKeyOrder(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(false).build()) {
            GroupConfig config = GroupConfig.builder().partitions(1).maxRangeReclaims(1).build();
            long sid = sluice.stream("rerun.poison").register().id();
            ConsumerGroup<String> g = sluice.stream("rerun.poison", String.class).consumerGroup("g");
            long gid = g.register(config).id();
            List<Long> ids = produce(sluice, "rerun.poison", "k", "k", "other", "k", "k", "other");
            // Handed out m0..m2 twice (more than maxRangeReclaims = 1 re-run), each holder died before its commit.
            markAsDied(db, sid, gid, 2, ids.get(2));
            String eq = "\"" + db.schema() + "\".exception_queue_" + sid;
            List<String> order = new CopyOnWriteArrayList<>();
            Map<Long, Integer> attempts = new ConcurrentHashMap<>();
            CountDownLatch rowRunning = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            try (Consumption c = g.consume(m -> {
                attempts.put(m.id(), m.attempt());
                if (m.id() == ids.get(0)) {
                    rowRunning.countDown();
                    assertThat(release.await(20, TimeUnit.SECONDS)).isTrue();
                }
                order.add(m.messageKey() + ":" + m.payload());
                return Outcome.success();
            }, OPTS)) {
                assertThat(rowRunning.await(20, TimeUnit.SECONDS)).isTrue();
                // m0 runs as a quarantined row that carried its two deliveries (the row counts this one too: 3); the
                // bucket's position moved on.
                assertThat(scalar(db, "SELECT attempts FROM " + eq + " WHERE consumer_group_id = ? AND message_id = ?"
                        + " AND status = 'inflight' AND last_error LIKE 'quarantined: its bucket was handed out 2 times%'", gid, ids.get(0)))
                        .isEqualTo(3);
                assertThat(bucket0(db, sid, gid)[0]).isGreaterThanOrEqualTo(ids.get(2));
                release.countDown();
                await().atMost(Duration.ofSeconds(20)).until(() -> attempts.size() == 6
                        && scalar(db, "SELECT count(*) FROM " + eq + " WHERE consumer_group_id = ?", gid) == 0);
            }
            assertThat(attempts.get(ids.get(0))).isEqualTo(3);
            assertThat(attempts.get(ids.get(1))).isEqualTo(3);
            assertThat(attempts.get(ids.get(2))).isEqualTo(3);
            assertThat(attempts.get(ids.get(5))).isEqualTo(1);
            // Per key in id order: the quarantined rows first, then the later messages of their key.
            assertThat(order.stream().filter(s -> s.startsWith("k:")).toList()).containsExactly("k:m0", "k:m1", "k:m3", "k:m4");
            assertThat(order.stream().filter(s -> s.startsWith("other:")).toList()).containsExactly("other:m2", "other:m5");
            assertThat(bucket0(db, sid, gid)).containsExactly(ids.get(5), 0, -1);
        }
    }
}
