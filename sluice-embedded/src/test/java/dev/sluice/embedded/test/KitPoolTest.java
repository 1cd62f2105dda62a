package dev.sluice.embedded.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;

/**
 * The kit's data source reuses physical connections but hands each caller a clean session, never waits
 * and never hands out a connection whose backend is gone.
 */
@SluiceTest
class KitPoolTest {

    private static KitPool pool(TestDatabase db) {
        return (KitPool) db.dataSource();
    }

    private static int pid(Connection c) throws SQLException {
        return intOf(c, "SELECT pg_backend_pid()");
    }

    private static int intOf(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getInt(1);
        }
    }

    private static String textOf(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }

    @Test
    void aClosedConnectionIsReusedInsteadOfReopened(TestDatabase db) throws Exception {
        KitPool pool = pool(db);
        assertThat(db.dataSource()).isSameAs(pool);
        int first;
        try (Connection c = db.connect()) {
            first = pid(c);
        }
        long opened = pool.opened();
        for (int i = 0; i < 20; i++) {
            try (Connection c = db.connect()) {
                assertThat(pid(c)).isEqualTo(first);
            }
            db.execute("SELECT 1");
        }
        assertThat(pool.opened()).isEqualTo(opened);
    }

    /** Holds {@code n} connections at once (so every idle one is taken) and returns their backends' pids. */
    private static Set<Integer> pidsHolding(TestDatabase db, int n) throws SQLException {
        List<Connection> open = new ArrayList<>();
        try {
            Set<Integer> pids = new HashSet<>();
            for (int i = 0; i < n; i++) {
                Connection c = db.connect();
                open.add(c);
                pids.add(pid(c)); // a dead one would fail here
            }
            assertThat(pids).hasSize(n);
            return pids;
        } finally {
            for (Connection c : open) {
                c.close();
            }
        }
    }

    @Test
    void nothingOfASessionReachesTheNextUserOfItsConnection(TestDatabase db) throws Exception {
        String table = db.schema() + ".row_lock";
        db.execute("CREATE TABLE " + table + " (id int PRIMARY KEY)");
        db.execute("INSERT INTO " + table + " VALUES (1)");
        db.execute("DROP ROLE IF EXISTS kit_pool_test_role");
        db.execute("CREATE ROLE kit_pool_test_role NOLOGIN");
        db.execute("GRANT USAGE ON SCHEMA " + db.schema() + " TO kit_pool_test_role");
        db.execute("GRANT SELECT, UPDATE ON " + table + " TO kit_pool_test_role");
        try {
            Connection c = db.connect();
            int pid = pid(c);
            try (Statement s = c.createStatement()) {
                s.execute("SELECT pg_advisory_lock(424242)");
                s.execute("SELECT pg_advisory_lock_shared(434343)");
                s.execute("LISTEN kit_pool_test");
                s.execute("SET work_mem = '1234kB'");
                s.execute("SET search_path = " + db.schema());
                s.execute("SELECT set_config('sluice.kit_test', 'leaked', false)");
                s.execute("PREPARE leaked_plan AS SELECT 1");
                s.execute("CREATE TEMP TABLE leaked_temp (n int)");
                s.execute("SET ROLE kit_pool_test_role");
            }
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                s.executeQuery("SELECT * FROM " + table + " FOR UPDATE").close();
            }
            Statement leftOpen = c.createStatement();
            c.close();
            assertThat(leftOpen.isClosed()).as("a statement left open is closed with its connection").isTrue();
            assertThat(c.isClosed()).isTrue();
            assertThatThrownBy(c::createStatement).isInstanceOf(SQLException.class);
            c.close(); // twice is fine
            assertThat(c.isValid(1)).isFalse();
            c.abort(Runnable::run); // a closed handle no longer reaches the connection it gave back

            try (Connection reused = db.connect(); Connection watcher = db.connect()) {
                assertThat(pid(reused)).as("the most recently returned connection comes first").isEqualTo(pid);
                try (PreparedStatement ps = watcher.prepareStatement(
                        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = ?")) {
                    ps.setInt(1, pid);
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        assertThat(rs.getInt(1)).as("session advisory locks released").isZero();
                    }
                }
                assertThat(intOf(watcher, "SELECT count(*) FROM (SELECT 1 FROM " + table + " FOR UPDATE NOWAIT) x"))
                        .as("the open transaction was rolled back").isEqualTo(1);
                assertThat(reused.getAutoCommit()).isTrue();
                assertThat(intOf(reused, "SELECT count(*) FROM pg_listening_channels()")).isZero();
                assertThat(textOf(reused, "SHOW work_mem")).isNotEqualTo("1234kB");
                assertThat(textOf(reused, "SHOW search_path")).doesNotContain(db.schema());
                assertThat(textOf(reused, "SELECT current_setting('sluice.kit_test', true)")).isNullOrEmpty();
                assertThat(intOf(reused, "SELECT count(*) FROM pg_prepared_statements WHERE name = 'leaked_plan'")).isZero();
                assertThat(intOf(reused, "SELECT count(*) FROM pg_class WHERE relname = 'leaked_temp'")).isZero();
                assertThat(textOf(reused, "SELECT current_user")).isEqualTo(textOf(reused, "SELECT session_user"));
            }
        } finally {
            db.execute("DROP OWNED BY kit_pool_test_role");
            db.execute("DROP ROLE kit_pool_test_role");
        }
    }

    @Test
    void aBackendTerminatedWhileIdleIsNeverHandedOut(TestDatabase db) throws Exception {
        int pid;
        try (Connection victim = db.connect(); Connection killer = db.connect()) {
            pid = pid(victim);
            victim.close(); // idle now
            try (PreparedStatement ps = killer.prepareStatement("SELECT pg_terminate_backend(?, 5000)")) {
                ps.setInt(1, pid);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    assertThat(rs.getBoolean(1)).isTrue();
                }
            }
        }
        assertThat(pidsHolding(db, KitPool.MAX_IDLE + 2)).doesNotContain(pid);
    }

    @Test
    void aConnectionWhoseBackendDiedInUseIsDroppedOnReturn(TestDatabase db) throws Exception {
        int pid;
        try (Connection c = db.connect()) {
            pid = pid(c);
            try (Statement s = c.createStatement()) {
                assertThatThrownBy(() -> s.execute("SELECT pg_terminate_backend(pg_backend_pid())"))
                        .isInstanceOf(SQLException.class);
            }
        }
        assertThat(pidsHolding(db, KitPool.MAX_IDLE + 2)).doesNotContain(pid);
    }

    @Test
    void manyConnectionsAtOnceEachGetTheirOwnBackendWithoutWaiting(TestDatabase db) throws Exception {
        assertThat(pidsHolding(db, KitPool.MAX_IDLE * 3)).hasSize(KitPool.MAX_IDLE * 3);
        assertThat(pool(db).idleCount()).isEqualTo(KitPool.MAX_IDLE);
    }

    @Test
    void aConnectionWhoseDriverWasUnwrappedIsNotReused(TestDatabase db) throws Exception {
        int pid;
        try (Connection c = db.connect()) {
            pid = pid(c);
            c.unwrap(PGConnection.class).setPrepareThreshold(1);
        }
        assertThat(pidsHolding(db, KitPool.MAX_IDLE + 2)).doesNotContain(pid);
    }

    @Test
    void anAbortedConnectionIsNotReused(TestDatabase db) throws Exception {
        Connection c = db.connect();
        int pid = pid(c);
        c.abort(Runnable::run);
        assertThat(c.isClosed()).isTrue();
        c.close();
        assertThat(pidsHolding(db, KitPool.MAX_IDLE + 2)).doesNotContain(pid);
    }
}
