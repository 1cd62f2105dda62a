package dev.sluice.internal.consume;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Outgoing;
import dev.sluice.ReadOptions;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.internal.schema.FamilyTables;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * While an unrelated transaction holds the server's xmin horizon, no row version written after it began can
 * be removed. The claim path must not pay for them: a claim, a renewal and a completion read the same number of pages
 * after thousands of claims under the hold as at its start (docs/fence.md, "Under a held xmin"). Measured with
 * the server's own block counters for the cursor and lease tables and their indexes — the tables every claim
 * and completion write.
 */
@SluiceTest
class HeldXminCostTest {
    private static final int WARM_UP = 1_000;
    private static final int WINDOW = 200;
    private static final int BETWEEN = 3_000;

    @Test
    void claimsAndCompletionsDoNotWalkTheVersionsAHeldXminKeeps(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            long sid = sluice.stream("held").register().id();
            FamilyTables t = new FamilyTables("\"" + db.schema() + "\"", sid);
            sluice.stream("held").consumerGroup("g").register();
            long gid = sluice.stream("held").consumerGroup("g").get().orElseThrow().id();
            List<Outgoing<String>> messages = new ArrayList<>();
            for (int i = 0; i < WARM_UP + 2 * WINDOW + BETWEEN + 10; i++) {
                messages.add(Outgoing.of("m" + i));
            }
            sluice.stream("held", String.class).producer().produceBatch(messages);
            try (Connection pin = db.connect(); Connection c = db.connect()) {
                pin.setAutoCommit(false);
                try (Statement s = pin.createStatement()) {
                    s.execute("SELECT pg_current_xact_id()"); // held, idle, touching no Sluice table
                }
                c.setAutoCommit(true);
                UUID owner = UUID.randomUUID();
                long cursorPagesBefore = pages(c, t.consumerGroupCursor());
                // Past the warm-up the indexes have the depth they keep for the rest (an index deepens with the
                // logarithm of its entries; that is not the cost looked for here).
                cycles(c, t, gid, owner, WARM_UP);
                analyze(c, t); // the statistics autovacuum would gather: plans as a long-running server gets them
                double early = blocksPerCycle(c, t, gid, owner, WINDOW);
                cycles(c, t, gid, owner, BETWEEN);
                analyze(c, t);
                double late = blocksPerCycle(c, t, gid, owner, WINDOW);
                // The hold is real: the replaced cursor versions are all still there.
                assertThat(pages(c, t.consumerGroupCursor()) - cursorPagesBefore)
                        .as("pages the held xmin keeps in the cursor table").isGreaterThanOrEqualTo(20);
                assertThat(late).as("blocks per claim + renewal + completion after %d cycles (at the start: %.1f)", BETWEEN, early)
                        .isLessThanOrEqualTo(early * 1.25 + 1);
                pin.rollback();
            }
        }
    }

    @Test
    void aClaimThatFindsNothingNewWritesNoCursorVersion(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            long sid = sluice.stream("quiet").register().id();
            FamilyTables t = new FamilyTables("\"" + db.schema() + "\"", sid);
            sluice.stream("quiet").consumerGroup("g").register();
            long gid = sluice.stream("quiet").consumerGroup("g").get().orElseThrow().id();
            sluice.stream("quiet").producer().produce("m".getBytes(StandardCharsets.UTF_8));
            try (Connection c = db.connect()) {
                c.setAutoCommit(true);
                UUID owner = UUID.randomUUID();
                long lease = claim(c, t, gid, owner, 10);
                assertThat(lease).isPositive();
                complete(c, t, lease, owner);
                assertThat(claim(c, t, gid, owner, 10)).as("claims nothing").isZero(); // stores committed = 1
                long seq = scalar(c, "SELECT max(seq) FROM " + t.consumerGroupCursor());
                for (int i = 0; i < 5; i++) {
                    assertThat(claim(c, t, gid, owner, 10)).isZero();
                }
                assertThat(scalar(c, "SELECT max(seq) FROM " + t.consumerGroupCursor())).isEqualTo(seq);
                assertThat(scalar(c, "SELECT count(*) FROM " + t.consumerGroupCursor())).isOne();
                assertThat(scalar(c, "SELECT committed FROM " + t.consumerGroupCursor())).isOne();
            }
        }
    }

    private static double blocksPerCycle(Connection c, FamilyTables t, long gid, UUID owner, int n) throws SQLException {
        long before = blocks(c, t);
        cycles(c, t, gid, owner, n);
        return (blocks(c, t) - before) / (double) n;
    }

    /** Claims one message at a time, renews its lease and completes it, {@code n} times. */
    private static void cycles(Connection c, FamilyTables t, long gid, UUID owner, int n) throws SQLException {
        for (int i = 0; i < n; i++) {
            long lease = claim(c, t, gid, owner, 1);
            assertThat(lease).as("cycle %d claims a range", i).isPositive();
            renew(c, t, lease, owner);
            complete(c, t, lease, owner);
        }
    }

    private static void renew(Connection c, FamilyTables t, long lease, UUID owner) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(ConsumeSql.of(t).ranges.renewRanges)) {
            java.sql.Array ids = c.createArrayOf("int8", new Long[] {lease});
            ps.setDouble(1, 30);
            ps.setArray(2, ids);
            ps.setArray(3, c.createArrayOf("text", new String[] {"{}"}));
            ps.setArray(4, c.createArrayOf("int4", new Integer[] {0}));
            ps.setArray(5, ids);
            ps.setObject(6, owner);
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).as("lease %d renewed", lease).isTrue();
            }
        }
    }

    /** Blocks read (hit or not) in the cursor and lease tables and their indexes, after flushing this session's counters. */
    private static long blocks(Connection c, FamilyTables t) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("SELECT pg_stat_force_next_flush()"); // flushed when this statement's transaction ends
        }
        return scalar(c, "SELECT sum(heap_blks_hit + heap_blks_read + coalesce(idx_blks_hit, 0) + coalesce(idx_blks_read, 0))"
                + " FROM pg_statio_all_tables WHERE relid IN ('" + t.consumerGroupCursor() + "'::regclass, '"
                + t.claimLease() + "'::regclass)");
    }

    private static void analyze(Connection c, FamilyTables t) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("ANALYZE " + t.consumerGroupCursor() + ", " + t.claimLease());
        }
    }

    private static long pages(Connection c, String table) throws SQLException {
        return scalar(c, "SELECT pg_relation_size('" + table + "'::regclass) / current_setting('block_size')::int");
    }

    /** The consumer's claim statements (batch {@code batch}); returns the lease id, 0 when nothing was claimed. */
    private static long claim(Connection c, FamilyTables t, long gid, UUID owner, int batch) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(ConsumeSql.of(t).ranges.claim)) {
            ConsumeSql.of(t).ranges.bindClaim(ps, gid, batch, ReadOptions.DEFAULT_MAX_BYTES, owner, 30, new LogWindow(0, Long.MAX_VALUE));
            ps.execute();
            assertThat(ps.getMoreResults()).isTrue();
            try (ResultSet rs = ps.getResultSet()) {
                assertThat(rs.next()).isTrue();
                return rs.getLong(4);
            }
        }
    }

    private static void complete(Connection c, FamilyTables t, long lease, UUID owner) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(ConsumeSql.of(t).ranges.completeRange)) {
            ps.setLong(1, lease);
            ps.setObject(2, owner);
            ps.setInt(3, 0);
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).as("lease %d completed", lease).isTrue();
            }
        }
    }

    private static long scalar(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
