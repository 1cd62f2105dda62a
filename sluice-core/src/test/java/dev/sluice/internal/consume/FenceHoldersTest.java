package dev.sluice.internal.consume;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.ProduceOptions;
import dev.sluice.Produced;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.internal.schema.FamilyTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The fence's holders (docs/fence.md), one interleaving per test, replayed step by step: each step runs on its
 * own connection, and the snapshot the holders are judged from is captured at the exact point of the
 * interleaving ({@link SnapshotFence#holders} takes it as text), so no test depends on timing.
 */
@SluiceTest
class FenceHoldersTest {
    private static Sluice sluice;
    private static FamilyTables t;
    private static Producer<String> producer;
    private static TestDatabase db;
    private static String unrelated;

    @BeforeAll
    static void start(TestDatabase database) {
        db = database;
        String other = "\"" + db.freshSchemaName("unrelated") + "\"";
        db.execute("CREATE SCHEMA " + other);
        unrelated = other + ".unrelated";
        db.execute("CREATE TABLE " + unrelated + " (n integer)");
        sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build();
        long id = sluice.stream("holders").register().id();
        t = new FamilyTables("\"" + db.schema() + "\"", id);
        producer = sluice.stream("holders", String.class).producer();
    }

    @AfterAll
    static void stop() {
        sluice.close();
    }

    /** An open transaction with its xid taken (a connection with auto-commit off). */
    private record Tx(Connection c, String xid) implements AutoCloseable {
        static Tx open() throws SQLException {
            Connection c = db.connect();
            c.setAutoCommit(false);
            return new Tx(c, text(c, "SELECT pg_current_xact_id()::text"));
        }

        void run(String sql) throws SQLException {
            try (Statement s = c.createStatement()) {
                s.execute(sql);
            }
        }

        @Override
        public void close() throws SQLException {
            c.close();
        }
    }

    /** The observation's first statement, as the claim runs it: the head, then an xid (the observer stays open). */
    private record Observer(Connection c, long head, String me) implements AutoCloseable {
        static Observer observe() throws SQLException {
            Connection c = db.connect();
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement("WITH h AS MATERIALIZED (SELECT " + t.headExpression()
                    + " AS head) SELECT h.head, pg_current_xact_id()::text FROM h"); ResultSet rs = ps.executeQuery()) {
                rs.next();
                return new Observer(c, rs.getLong(1), rs.getString(2));
            }
        }

        String snapshot() throws SQLException {
            return text(c, "SELECT pg_current_snapshot()::text");
        }

        List<String> holders(String snapshot) throws SQLException {
            return SnapshotFence.holders(c, t, snapshot, me);
        }

        @Override
        public void close() throws SQLException {
            c.rollback();
            c.close();
        }
    }

    private static String text(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }

    private static boolean settledNow(List<String> holders) throws SQLException {
        try (Connection c = db.connect()) {
            return SnapshotFence.settled(c, new SnapshotFence.Observation(0, holders));
        }
    }

    @Test
    void anOpenProducerBelowTheHeadHoldsTheFenceUntilItEnds() throws Exception {
        for (boolean commits : new boolean[] {true, false}) {
            try (Tx p = Tx.open()) {
                Produced drawn = producer.produceInTransaction(p.c(), "late", ProduceOptions.NONE);
                try (Observer o = Observer.observe()) {
                    assertThat(o.head()).isGreaterThanOrEqualTo(drawn.id());
                    List<String> holders = o.holders(o.snapshot());
                    assertThat(holders).containsExactly(p.xid());
                    assertThat(settledNow(holders)).isFalse();
                    if (commits) {
                        p.c().commit();
                    } else {
                        p.c().rollback();
                    }
                    assertThat(settledNow(holders)).isTrue();
                }
            }
        }
    }

    @Test
    void aProducerThatEndsBetweenTheSnapshotAndTheLockReadIsNotAHolderAndALaterSnapshotSeesIt() throws Exception {
        try (Tx p = Tx.open()) {
            Produced drawn = producer.produceInTransaction(p.c(), "ends in between", ProduceOptions.NONE);
            try (Observer o = Observer.observe()) {
                String snapshot = o.snapshot(); // P is running in it: it cannot see P's message
                assertThat(text(o.c(), "SELECT pg_visible_in_snapshot('" + p.xid() + "'::xid8, '" + snapshot
                        + "'::pg_snapshot)::text")).isEqualTo("false");
                p.c().commit();                 // P has ended (and dropped its locks) before the lock read
                assertThat(o.holders(snapshot)).as("judged from the older snapshot").isEmpty();
                // The statement after the lock read (what the claim fetches with) sees P's message.
                assertThat(text(o.c(), "SELECT count(*)::text FROM " + t.messageLog() + " WHERE id = " + drawn.id()))
                        .isEqualTo("1");
            }
        }
    }

    @Test
    void anUnrelatedTransactionWithAnXidIsNeverAHolder() throws Exception {
        try (Tx u = Tx.open()) {
            u.run("INSERT INTO " + unrelated + " VALUES (1)");
            producer.produce("committed");
            try (Observer o = Observer.observe()) {
                String snapshot = o.snapshot();
                assertThat(text(o.c(), "SELECT (pg_snapshot_xmin('" + snapshot + "'::pg_snapshot) <= '" + u.xid() + "'::xid8)::text"))
                        .as("the old rule (xmin past the observation) would wait for it").isEqualTo("true");
                assertThat(o.holders(snapshot)).isEmpty();
            }
            u.c().rollback();
        }
    }

    @Test
    void anUnrelatedTransactionAtOrAboveTheSnapshotsXmaxIsNotAHolderButAProducerThereIs() throws Exception {
        // Candidates at or above xmax (assigned, not yet known ended) are judged by their locks too. Retried
        // until nothing else ends between U's xid and the snapshot, which makes xmax <= U.
        for (int attempt = 0; ; attempt++) {
            try (Tx p = Tx.open(); Tx u = Tx.open()) {
                producer.produceInTransaction(p.c(), "above xmax", ProduceOptions.NONE);
                try (Observer o = Observer.observe()) {
                    String snapshot = o.snapshot();
                    boolean aboveXmax = "true".equals(text(o.c(), "SELECT (pg_snapshot_xmax('" + snapshot
                            + "'::pg_snapshot) <= '" + p.xid() + "'::xid8)::text"));
                    if (!aboveXmax && attempt < 20) {
                        continue;
                    }
                    assertThat(aboveXmax).as("P and U at or above xmax").isTrue();
                    assertThat(o.holders(snapshot)).containsExactly(p.xid()).doesNotContain(u.xid());
                    return;
                }
            }
        }
    }

    @Test
    void aPreparedProducerHoldsTheFenceAndAPreparedUnrelatedTransactionDoesNot() throws Exception {
        String producingGid = "sluice-test-" + UUID.randomUUID();
        String unrelatedGid = "sluice-test-" + UUID.randomUUID();
        String producerXid;
        String unrelatedXid;
        try {
            try (Tx p = Tx.open(); Tx u = Tx.open()) {
                // Sluice's producer notifies, which PREPARE refuses; a plain INSERT draws its id the same way (the
                // column's default), under the same lock.
                p.run("INSERT INTO " + t.messageLog() + " (payload) VALUES ('\\x00'::bytea)");
                p.run("PREPARE TRANSACTION '" + producingGid + "'");
                u.run("INSERT INTO " + unrelated + " VALUES (2)");
                u.run("PREPARE TRANSACTION '" + unrelatedGid + "'");
                producerXid = p.xid();
                unrelatedXid = u.xid();
            }
            try (Observer o = Observer.observe()) {
                List<String> holders = o.holders(o.snapshot());
                assertThat(holders).containsExactly(producerXid).doesNotContain(unrelatedXid);
                db.execute("COMMIT PREPARED '" + producingGid + "'");
                assertThat(settledNow(holders)).isTrue();
            }
        } finally {
            try (Connection c = db.connect()) {
                for (String gid : new String[] {producingGid, unrelatedGid}) {
                    if (text(c, "SELECT count(*)::text FROM pg_prepared_xacts WHERE gid = '" + gid + "'").equals("1")) {
                        db.execute("ROLLBACK PREPARED '" + gid + "'");
                    }
                }
            }
        }
    }

    @Test
    void aTransactionThatHasAnXidButHasNotProducedYetIsNotAHolderAndDrawsAboveTheHead() throws Exception {
        try (Tx later = Tx.open()) {
            try (Observer o = Observer.observe()) {
                assertThat(o.holders(o.snapshot())).doesNotContain(later.xid());
                Produced drawn = producer.produceInTransaction(later.c(), "after the observation", ProduceOptions.NONE);
                assertThat(drawn.id()).isGreaterThan(o.head());
            }
            later.c().commit();
        }
    }

    @Test
    void aTransactionInAnotherDatabaseIsNeverAHolder() throws Exception {
        String other = "sluice_fence_" + UUID.randomUUID().toString().replace("-", "");
        db.execute("CREATE DATABASE " + other);
        try {
            String url = db.jdbcUrl().replaceFirst("^(jdbc:postgresql://[^/]+/)[^?]*", "$1" + other);
            try (Connection c = java.sql.DriverManager.getConnection(url)) {
                c.setAutoCommit(false);
                try (Statement s = c.createStatement()) {
                    s.execute("CREATE TABLE busy (n integer)");
                    s.execute("INSERT INTO busy VALUES (1)"); // an xid and a RowExclusiveLock, in the other database
                }
                String xid = text(c, "SELECT pg_current_xact_id()::text");
                try (Observer o = Observer.observe()) {
                    String snapshot = o.snapshot();
                    assertThat(text(o.c(), "SELECT (pg_visible_in_snapshot('" + xid + "'::xid8, '" + snapshot
                            + "'::pg_snapshot))::text")).as("running in the observer's snapshot").isEqualTo("false");
                    assertThat(o.holders(snapshot)).isEmpty();
                }
                c.rollback();
            }
        } finally {
            db.execute("DROP DATABASE " + other);
        }
    }
}
