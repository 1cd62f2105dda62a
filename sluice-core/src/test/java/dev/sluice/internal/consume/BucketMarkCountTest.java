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
 * What a fetch's mark counts ({@link PartitionSql#fetch}): {@code runs} is how often the messages up to
 * {@code run_high} were handed out. A member's next batch, fetched from its own carried position while the commit of
 * its last batch is still on its way (the stored position below {@code run_high}), hands out only new messages: the
 * runs stay. A fetch from the stored position hands the old ones out again: runs + 1. (Counting every fetch made a
 * member that ran steadily with its commits a batch behind count runs up without any re-run, so a takeover delivered
 * messages handed out once as attempt 3 and more, and could quarantine them.)
 */
@SluiceTest
class BucketMarkCountTest {

    /** Runs the real fetch for bucket 0 from {@code from} (the member's position for it) and returns the ids it handed out. */
    private static List<Long> fetch(Connection c, PartitionSql sql, long gid, long from, long head) throws Exception {
        try (PreparedStatement set = c.prepareStatement("SELECT set_config('sluice.settled', ?, false)")) {
            set.setString(1, Long.toString(head));
            set.execute();
        }
        List<Long> ids = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(sql.fetch)) {
            PartitionSql.bindFetch(ps, 1, c, 1, new Integer[] {0}, new Long[] {from}, LogWindow.from(from, 100), 100, 1L << 30, gid);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    long id = rs.getLong(7);
                    if (!rs.wasNull()) {
                        ids.add(id);
                    }
                }
            }
        }
        return ids;
    }

    /** Bucket 0's newest version: position, runs, run_high (-1 when null). */
    private static long[] bucket0(Connection c, String pc, long gid) throws Exception {
        try (PreparedStatement ps = c.prepareStatement("SELECT position, runs, coalesce(run_high, -1) FROM " + pc
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
                // run_high was handed out once before, so this is their second hand-out.
                List<Long> again = fetch(c, sql, gid, start, third.get(1));
                assertThat(again).hasSize(8);
                assertThat(bucket0(c, pc, gid)).as("a re-run counts").containsExactly(start, 2, third.get(1));
            }
        }
    }
}
