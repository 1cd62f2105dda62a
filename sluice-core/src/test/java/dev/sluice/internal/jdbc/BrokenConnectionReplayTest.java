package dev.sluice.internal.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.testing.ForwardingDataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * After a backend termination or a server restart a pool still holds dead connections, each failing
 * once when used. Work that cannot have committed is replayed at once on the next connection, so one
 * termination costs a few failed round trips, not a failed claim, renewal or outcome.
 */
@SluiceTest
class BrokenConnectionReplayTest {

    /** Hands out the given dead connections first (as a pool does after a termination), then live ones. */
    private static final class DeadFirst extends ForwardingDataSource {
        final Deque<Connection> dead = new ArrayDeque<>();
        final AtomicInteger handedOut = new AtomicInteger();

        DeadFirst(TestDatabase db) {
            super(db.dataSource());
        }

        @Override
        public Connection getConnection() throws SQLException {
            handedOut.incrementAndGet();
            Connection c = dead.poll();
            return c != null ? c : super.getConnection();
        }

        /** Opens n connections and terminates their backends from another one. */
        void killNext(int n) throws SQLException {
            for (int i = 0; i < n; i++) {
                Connection c = delegate.getConnection();
                int pid;
                try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
                    rs.next();
                    pid = rs.getInt(1);
                }
                try (Connection admin = delegate.getConnection();
                     PreparedStatement ps = admin.prepareStatement("SELECT pg_terminate_backend(?, 5000)")) {
                    ps.setInt(1, pid);
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        assertThat(rs.getBoolean(1)).isTrue();
                    }
                }
                dead.add(c);
            }
        }
    }

    private static long count(TestDatabase db, String table) throws SQLException {
        try (Connection c = db.connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*) FROM " + table)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Test
    void aTransactionIsReplayedOnTheNextConnectionAndWritesOnce(TestDatabase db) throws Exception {
        String table = db.schema() + ".replay_tx";
        db.execute("CREATE SCHEMA IF NOT EXISTS " + db.schema());
        db.execute("CREATE TABLE " + table + " (n int)");
        DeadFirst ds = new DeadFirst(db);
        Db sut = new Db(ds);
        ds.killNext(3);
        AtomicInteger runs = new AtomicInteger();
        int got = sut.transaction("insert", c -> {
            runs.incrementAndGet();
            try (Statement s = c.createStatement()) {
                return s.executeUpdate("INSERT INTO " + table + " VALUES (1)");
            }
        });
        assertThat(got).isEqualTo(1);
        assertThat(runs.get()).isEqualTo(4); // three dead connections, then a live one
        assertThat(count(db, table)).isEqualTo(1);
    }

    @Test
    void plainAutoCommitReportsTheDeadConnectionButTheReplayableFormReplaces(TestDatabase db) throws Exception {
        DeadFirst ds = new DeadFirst(db);
        Db sut = new Db(ds);
        ds.killNext(1);
        // Control: auto-commit work of unknown idempotence is not replayed.
        assertThatThrownBy(() -> sut.autoCommit("read", c -> select1(c)))
                .isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.DATABASE_UNAVAILABLE));
        ds.killNext(5);
        assertThat(sut.<Integer>autoCommitReplayable("read", BrokenConnectionReplayTest::select1)).isEqualTo(1);
        assertThat(ds.dead).isEmpty();
    }

    @Test
    void aClientListsConsumesAndWorksOnAPoolWhoseConnectionsAllDied(TestDatabase db) throws Exception {
        DeadFirst ds = new DeadFirst(db);
        String schema = db.freshSchemaName("dead_pool");
        try (dev.sluice.Sluice sluice = dev.sluice.Sluice.builder().dataSource(ds).schema(schema).build()) {
            sluice.stream("dead.pool").register();
            sluice.stream("dead.pool").consumerGroup("g").register();
            sluice.stream("dead.pool", String.class).producer().produce("m");
            dev.sluice.Queue<String> q = sluice.queue("dead-pool", String.class);
            q.enqueue("j");
            // As after a backend termination: the next connections the client takes are dead. Catalog reads and
            // listings replace them (before, the first read failed with SLU-0300 and a process starting its
            // consumers at that moment gave up).
            ds.killNext(4);
            assertThat(sluice.stream("dead.pool").consumerGroups()).extracting(dev.sluice.GroupInfo::name).containsExactly("g");
            assertThat(ds.dead).isEmpty();
            ds.killNext(4);
            assertThat(q.admin().stats().pending()).isEqualTo(1);
            assertThat(ds.dead).isEmpty();
            java.util.concurrent.CountDownLatch handled = new java.util.concurrent.CountDownLatch(2);
            ds.killNext(4);
            try (dev.sluice.Consumption c = sluice.stream("dead.pool", String.class).consumerGroup("g").consume(m -> {
                handled.countDown();
                return dev.sluice.Outcome.success();
            })) {
                ds.killNext(4);
                try (dev.sluice.Worker w = q.work(job -> handled.countDown())) {
                    assertThat(handled.await(30, java.util.concurrent.TimeUnit.SECONDS)).as("the message and the job").isTrue();
                }
            }
        }
    }

    @Test
    void aCommitWhoseReplyIsLostIsReplayedOnlyWhenTheWorkSaysItMayRunAgain(TestDatabase db) throws Exception {
        String table = db.schema() + ".replay_unknown";
        db.execute("CREATE SCHEMA IF NOT EXISTS " + db.schema());
        db.execute("CREATE TABLE " + table + " (k int PRIMARY KEY, runs int NOT NULL)");
        String upsert = "INSERT INTO " + table + " VALUES (?, 1) ON CONFLICT (k) DO UPDATE SET runs = " + table + ".runs + 1";
        dev.sluice.testing.LostCommitReplies ds = new dev.sluice.testing.LostCommitReplies(db.dataSource(), 1);
        Db sut = new Db(ds);
        // Plain work: the outcome is unknown and said so; the write did land.
        assertThatThrownBy(() -> sut.transaction("plain", c -> Sql.update(c, upsert, 1)))
                .isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.COMMIT_OUTCOME_UNKNOWN));
        assertThat(ds.lost.get()).isEqualTo(1);
        // Idempotent work: run again on another connection after two lost replies, and the caller gets its result.
        ds.lostReplies.set(2);
        assertThat(sut.<Integer>idempotentTransaction("idempotent", c -> Sql.update(c, upsert, 2))).isEqualTo(1);
        assertThat(ds.lost.get()).isEqualTo(3);
        try (Connection c = db.connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT k, runs FROM " + table + " ORDER BY k")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getInt(2)).as("the plain write landed once").isEqualTo(1);
            assertThat(rs.next()).isTrue();
            assertThat(rs.getInt(2)).as("both lost commits landed, and the replay that was answered").isEqualTo(3);
        }
        // Replays stay bounded: every reply lost, given up with the unknown outcome.
        ds.lostReplies.set(Integer.MAX_VALUE);
        assertThatThrownBy(() -> sut.idempotentTransaction("always lost", c -> Sql.update(c, upsert, 3)))
                .isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.COMMIT_OUTCOME_UNKNOWN));
        assertThat(ds.lost.get()).isEqualTo(3 + Db.MAX_BROKEN_REPLAYS + 1);
    }

    @Test
    void replaysAreBoundedAndOtherFailuresAreNotReplayed(TestDatabase db) {
        DeadFirst ds = new DeadFirst(db);
        Db sut = new Db(ds);
        // Work whose every connection dies under it: given up after the bound, reported unavailable.
        AtomicInteger runs = new AtomicInteger();
        assertThatThrownBy(() -> transactionRunning(sut, "SELECT pg_terminate_backend(pg_backend_pid())", runs))
                .isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.DATABASE_UNAVAILABLE));
        assertThat(runs.get()).isEqualTo(Db.MAX_BROKEN_REPLAYS + 1);
        // An ordinary SQL error runs once.
        AtomicInteger once = new AtomicInteger();
        assertThatThrownBy(() -> transactionRunning(sut, "SELECT 1/0", once))
                .isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.DATABASE_ERROR));
        assertThat(once.get()).isEqualTo(1);
    }

    /** A transaction that executes {@code sql}, counting how often its work ran. */
    private static Object transactionRunning(Db sut, String sql, AtomicInteger runs) {
        return sut.transaction("run " + sql, c -> {
            runs.incrementAndGet();
            try (Statement s = c.createStatement()) {
                s.execute(sql);
            }
            return null;
        });
    }

    private static int select1(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT 1")) {
            rs.next();
            return rs.getInt(1);
        }
    }
}
