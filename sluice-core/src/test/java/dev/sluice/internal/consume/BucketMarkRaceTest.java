package dev.sluice.internal.consume;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.GroupConfig;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.internal.schema.FamilyTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The commit of a carried position and a fetch's mark of the same bucket can both write the bucket's next version
 * (a member carries an idle bucket's position while a claim hands the bucket out). Whichever comes second must
 * neither fail nor lose the other's write: the commit lands on the mark's version (moving the position, keeping the
 * run tops above the position), the mark lands on the commit's version (adding its top: a skipped mark left the
 * hand-out unrecorded), and neither breaks the other. Both insert before they delete,
 * so the two never wait for each other in a cycle (a commit that deleted first deadlocked with a mark).
 */
@SluiceTest
class BucketMarkRaceTest {

    private static long[] current(Connection c, String pc, long gid) throws Exception {
        try (PreparedStatement ps = c.prepareStatement("SELECT seq, position, cardinality(run_tops), coalesce((SELECT max(t) FROM unnest(run_tops) AS t), -1), count(*) OVER () FROM " + pc
                + " WHERE consumer_group_id = ? AND bucket = 0 ORDER BY seq DESC LIMIT 1")) {
            ps.setLong(1, gid);
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).isTrue();
                return new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getLong(5)};
            }
        }
    }

    /** Runs the member's commit of positions ({@link PartitionSql#advance}) for bucket 0 in its own transaction. */
    /** Commits bucket 0 at {@code position} with the real {@link PartitionSql#advance}, in a transaction of its own. */
    static void advance(TestDatabase db, PartitionSql sql, long gid, long position) throws Exception {
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement(sql.advance)) {
                ps.setArray(1, c.createArrayOf("int4", new Integer[] {0}));
                ps.setArray(2, c.createArrayOf("int8", new Long[] {position}));
                ps.setLong(3, gid);
                ps.setLong(4, gid);
                ps.execute();
            }
            c.commit();
        }
    }

    @Test
    void aCommitRacingAMarkLandsOnTheMarksVersionAndKeepsItsRuns(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(false).build()) {
            long sid = sluice.stream("mark.race").register().id();
            long gid = sluice.stream("mark.race", String.class).consumerGroup("g").register(GroupConfig.builder().partitions(1).build()).id();
            FamilyTables t = new FamilyTables("\"" + db.schema() + "\"", sid);
            PartitionSql sql = new PartitionSql(t);
            String pc = t.partitionCursor();
            try (Connection mark = db.connect(); Connection probe = db.connect()) {
                long[] before = current(probe, pc, gid);
                // A fetch's mark, not yet committed: version seq + 1 at the same position, runs 1, up to id 500.
                mark.setAutoCommit(false);
                try (PreparedStatement ps = mark.prepareStatement("INSERT INTO " + pc + " (consumer_group_id, bucket, seq, position,"
                        + " run_tops) VALUES (?, 0, ?, ?, '{500}')")) {
                    ps.setLong(1, gid);
                    ps.setLong(2, before[0] + 1);
                    ps.setLong(3, before[1]);
                    ps.executeUpdate();
                }
                // The commit of a carried position (100, below the mark's run_high) read the old version and now waits
                // on the mark's insert of the same seq.
                CompletableFuture<Void> commit = CompletableFuture.runAsync(() -> {
                    try {
                        advance(db, sql, gid, 100);
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                });
                // The commit waits on the mark's row lock (speculative insert of the same key) until the mark commits.
                org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).until(() -> {
                    try (PreparedStatement ps = probe.prepareStatement("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                            + " AND query LIKE '%unnest(%' AND pid <> pg_backend_pid()"); ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        return rs.getLong(1) == 1;
                    }
                });
                assertThat(commit).isNotDone();
                // The mark goes on to delete the version it replaced: the commit has not touched it (it waits at its
                // insertion, before its deletion), so this does not wait on the commit — no deadlock.
                mark.createStatement().execute("SET lock_timeout = '5s'"); // a wait here would be the deadlock: fail, do not hang
                try (PreparedStatement ps = mark.prepareStatement("DELETE FROM " + pc + " WHERE consumer_group_id = ? AND bucket = 0 AND seq = ?")) {
                    ps.setLong(1, gid);
                    ps.setLong(2, before[0]);
                    assertThat(ps.executeUpdate()).isEqualTo(1);
                }
                mark.commit();
                commit.get(10, TimeUnit.SECONDS);
                long[] after = current(probe, pc, gid);
                assertThat(after[0]).isEqualTo(before[0] + 1);
                assertThat(after[1]).isEqualTo(100); // the commit's position
                assertThat(after[2]).isEqualTo(1); // the mark's runs: its batch (up to 500) is still open
                assertThat(after[3]).isEqualTo(500);
                assertThat(after[4]).isEqualTo(1); // one version left
                // The batch commits at 500: the runs start again at 0.
                advance(db, sql, gid, 500);
                long[] done = current(probe, pc, gid);
                assertThat(done[1]).isEqualTo(500);
                assertThat(done[2]).isZero();
                assertThat(done[3]).isEqualTo(-1);
                assertThat(done[4]).isEqualTo(1);
            }
        }
    }

    @Test
    void aMarkRacingACommitLandsOnTheCommitsVersionAndKeepsItsTop(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(false).build()) {
            long sid = sluice.stream("mark.race2").register().id();
            long gid = sluice.stream("mark.race2", String.class).consumerGroup("g").register(GroupConfig.builder().partitions(1).build()).id();
            FamilyTables t = new FamilyTables("\"" + db.schema() + "\"", sid);
            PartitionSql sql = new PartitionSql(t);
            String pc = t.partitionCursor();
            java.util.List<Long> ids = new java.util.ArrayList<>();
            try (dev.sluice.Producer<String> p = sluice.stream("mark.race2", String.class).producer()) {
                for (int i = 0; i < 4; i++) {
                    ids.add(p.produce("m" + i).id());
                }
            }
            try (Connection carry = db.connect(); Connection fetch = db.connect(); Connection probe = db.connect()) {
                long[] before = current(probe, pc, gid);
                // The member carries the bucket's idle position to the first message, in a commit not yet committed.
                carry.setAutoCommit(false);
                try (PreparedStatement ps = carry.prepareStatement(sql.advance)) {
                    ps.setArray(1, carry.createArrayOf("int4", new Integer[] {0}));
                    ps.setArray(2, carry.createArrayOf("int8", new Long[] {ids.get(0)}));
                    ps.setLong(3, gid);
                    ps.setLong(4, gid);
                    ps.execute();
                }
                // Its claim of the bucket from there reads the old version and waits at its mark's insertion of seq + 1.
                CompletableFuture<java.util.List<Long>> claim = CompletableFuture.supplyAsync(() -> {
                    try {
                        return BucketMarkCountTest.fetch(fetch, sql, gid, ids.get(0), ids.get(3));
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                });
                org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).until(() -> {
                    try (PreparedStatement ps = probe.prepareStatement("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                            + " AND query LIKE '%sluice.settled%' AND pid <> pg_backend_pid()"); ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        return rs.getLong(1) == 1;
                    }
                });
                carry.commit();
                assertThat(claim.get(10, TimeUnit.SECONDS)).containsExactlyElementsOf(ids.subList(1, 4));
                long[] after = current(probe, pc, gid);
                assertThat(after[0]).isEqualTo(before[0] + 1);
                assertThat(after[1]).as("the carried position").isEqualTo(ids.get(0));
                // The mark landed on the carry's version: the hand-out up to the last message is recorded, so a
                // member that takes the bucket over now delivers them as their second attempt.
                assertThat(after[2]).as("one run").isEqualTo(1);
                assertThat(after[3]).isEqualTo(ids.get(3));
                assertThat(after[4]).isEqualTo(1); // one version left
            }
        }
    }
}
