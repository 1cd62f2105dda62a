package dev.sluice.internal.consume;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.GroupConfig;
import dev.sluice.ProduceOptions;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.internal.schema.FamilyTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What a fetch's mark counts ({@link PartitionSql#fetch}): {@code run_tops} holds the highest id of every hand-out run
 * since the position, and a message was handed out once per top at or above it. A member's next batch, fetched from
 * its own carried position while the commit of its last batch is still on its way, continues its run (the run's top
 * moves up): nothing is counted twice. A fetch from the stored position hands the old ones out again: a new run. A
 * re-run that goes on in several batches is one run too. (Counting every fetch made a member that ran steadily with its
 * commits a batch behind count runs up without any re-run; one count with one high mark counted every later batch of
 * a re-run as another re-run — a takeover delivered messages handed out once as attempt 3 and more, and could
 * quarantine them.)
 */
@SluiceTest
class BucketMarkCountTest {

    /** Runs the real fetch for bucket 0 from {@code from} (the member's position for it) and returns the ids it handed out. */
    static List<Long> fetch(Connection c, PartitionSql sql, long gid, long from, long head) throws Exception {
        return fetch(c, sql, gid, from, head, 100, null);
    }

    /**
     * Runs the real fetch for bucket 0 from {@code from}, at most {@code batch} messages; returns the ids handed out and
     * puts the attempt each is delivered as (from the run tops the fetch read) into {@code attempts} when given.
     */
    private static List<Long> fetch(Connection c, PartitionSql sql, long gid, long from, long head, int batch,
                                    java.util.Map<Long, Integer> attempts) throws Exception {
        try (PreparedStatement set = c.prepareStatement("SELECT set_config('sluice.settled', ?, false)")) {
            set.setString(1, Long.toString(head));
            set.execute();
        }
        List<Long> ids = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(sql.fetch)) {
            PartitionSql.bindFetch(ps, 1, c, 1, new Integer[] {0}, new Long[] {from}, LogWindow.from(from, 100), batch, 1L << 30, gid);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    long id = rs.getLong(7);
                    if (!rs.wasNull()) {
                        ids.add(id);
                        if (attempts != null) {
                            attempts.put(id, PartitionClaims.Runs.of((Long[]) rs.getArray("bucket_run_tops").getArray()).attempt(id));
                        }
                    }
                }
            }
        }
        return ids;
    }

    /** Bucket 0's newest version: position, how many run tops, the highest (-1 when none). */
    private static long[] bucket0(Connection c, String pc, long gid) throws Exception {
        try (PreparedStatement ps = c.prepareStatement("SELECT position, cardinality(run_tops), coalesce((SELECT max(t) FROM unnest(run_tops) AS t), -1) FROM " + pc
                + " WHERE consumer_group_id = ? AND bucket = 0 ORDER BY seq DESC LIMIT 1")) {
            ps.setLong(1, gid);
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).isTrue();
                return new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)};
            }
        }
    }

    private static List<Long> produce(Sluice sluice, String stream, int n) {
        List<Long> ids = new ArrayList<>();
        try (Producer<String> p = sluice.stream(stream, String.class).producer()) {
            for (int i = 0; i < n; i++) {
                ids.add(p.produce("m" + i, ProduceOptions.key("k" + i)).id());
            }
        }
        return ids;
    }

    @Test
    void aMembersNextBatchAboveItsLastIsNoReRunButAFetchFromTheStoredPositionIs(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(false).build()) {
            long sid = sluice.stream("mark.count").register().id();
            long gid = sluice.stream("mark.count", String.class).consumerGroup("g").register(GroupConfig.builder().partitions(1).build()).id();
            FamilyTables t = new FamilyTables("\"" + db.schema() + "\"", sid);
            PartitionSql sql = new PartitionSql(t);
            String pc = t.partitionCursor();
            try (Connection c = db.connect()) {
                long start = bucket0(c, pc, gid)[0];
                List<Long> first = produce(sluice, "mark.count", 3);
                // Batch 1 from the stored position: handed out once.
                assertThat(fetch(c, sql, gid, start, first.get(2))).containsExactlyElementsOf(first);
                assertThat(bucket0(c, pc, gid)).containsExactly(start, 1, first.get(2));
                List<Long> second = produce(sluice, "mark.count", 3);
                // Batch 2 from the member's carried position (batch 1 done, its commit not stored yet): new messages only.
                assertThat(fetch(c, sql, gid, first.get(2), second.get(2))).containsExactlyElementsOf(second);
                assertThat(bucket0(c, pc, gid)).as("the next batch is no re-run").containsExactly(start, 1, second.get(2));
                List<Long> third = produce(sluice, "mark.count", 2);
                assertThat(fetch(c, sql, gid, second.get(2), third.get(1))).containsExactlyElementsOf(third);
                assertThat(bucket0(c, pc, gid)).containsExactly(start, 1, third.get(1));
                // A member that takes the bucket over runs it again from the stored position: every message up to
                // the run's top was handed out once before, so this is their second hand-out.
                List<Long> again = fetch(c, sql, gid, start, third.get(1));
                assertThat(again).hasSize(8);
                assertThat(bucket0(c, pc, gid)).as("a re-run counts").containsExactly(start, 2, third.get(1));
            }
        }
    }

    /** Bucket 0's run tops, highest first. */
    private static List<Long> tops(Connection c, String pc, long gid) throws Exception {
        try (PreparedStatement ps = c.prepareStatement("SELECT run_tops FROM " + pc
                + " WHERE consumer_group_id = ? AND bucket = 0 ORDER BY seq DESC LIMIT 1")) {
            ps.setLong(1, gid);
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).isTrue();
                return List.of((Long[]) rs.getArray(1).getArray());
            }
        }
    }

    @Test
    void aReRunInSeveralBatchesCountsEachMessageOnceMore(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(false).build()) {
            long sid = sluice.stream("mark.rerun").register().id();
            long gid = sluice.stream("mark.rerun", String.class).consumerGroup("g").register(GroupConfig.builder().partitions(1).build()).id();
            FamilyTables t = new FamilyTables("\"" + db.schema() + "\"", sid);
            PartitionSql sql = new PartitionSql(t);
            String pc = t.partitionCursor();
            try (Connection c = db.connect()) {
                long start = bucket0(c, pc, gid)[0];
                List<Long> ids = produce(sluice, "mark.rerun", 9);
                long head = ids.get(8);
                // A holder hands out all nine in one batch and dies: one run, up to the ninth.
                assertThat(fetch(c, sql, gid, start, head)).hasSize(9);
                assertThat(tops(c, pc, gid)).containsExactly(head);
                // Its successor re-runs them three at a time, committing each batch: every one is its second delivery.
                java.util.Map<Long, Integer> attempts = new java.util.HashMap<>();
                assertThat(fetch(c, sql, gid, start, head, 3, attempts)).containsExactlyElementsOf(ids.subList(0, 3));
                assertThat(tops(c, pc, gid)).as("a re-run from the position is a new run").containsExactly(head, ids.get(2));
                BucketMarkRaceTest.advance(db, sql, gid, ids.get(2));
                assertThat(tops(c, pc, gid)).as("the commit spends the tops it passes").containsExactly(head);
                assertThat(fetch(c, sql, gid, ids.get(2), head, 3, attempts)).containsExactlyElementsOf(ids.subList(3, 6));
                assertThat(tops(c, pc, gid)).containsExactly(head, ids.get(5));
                // The next batch before that commit is stored (a carried position): it continues the same run.
                assertThat(fetch(c, sql, gid, ids.get(5), head, 3, attempts)).containsExactlyElementsOf(ids.subList(6, 9));
                assertThat(tops(c, pc, gid)).as("a continued run moves its top").containsExactly(head, head);
                assertThat(attempts).as("each handed out once before").hasSize(9).allSatisfy((id, a) -> assertThat(a).isEqualTo(2));
                // That successor dies too, its last commit at the third: a third holder delivers the rest as attempt 3.
                attempts.clear();
                assertThat(fetch(c, sql, gid, ids.get(2), head, 100, attempts)).containsExactlyElementsOf(ids.subList(3, 9));
                assertThat(attempts).as("each handed out twice before").allSatisfy((id, a) -> assertThat(a).isEqualTo(3));
                assertThat(tops(c, pc, gid)).containsExactly(head, head, head);
                BucketMarkRaceTest.advance(db, sql, gid, head);
                assertThat(tops(c, pc, gid)).isEmpty();
            }
        }
    }
}
