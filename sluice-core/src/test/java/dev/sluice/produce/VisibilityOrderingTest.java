package dev.sluice.produce;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Produced;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Inspects the visibility ordering (docs/produce.md): a producing statement must hold its transaction id
 * before it draws message ids. A test trigger parks the insert right after the id was drawn (column
 * defaults and nextval are evaluated before BEFORE ROW triggers) and before the row is stored; while it
 * is parked we read the producer's backend_xid from pg_stat_activity.
 */
@SluiceTest
class VisibilityOrderingTest {
    private static final long PARK_LOCK = 7_700_001L;

    @Test
    void theProducerHoldsItsXidBeforeItsIdIsDrawn(TestDatabase db) throws Exception {
        String q = "\"" + db.schema() + "\"";
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            long id = sluice.stream("ordering").register().id();
            Producer<byte[]> producer = sluice.stream("ordering").producer();
            producer.produce(new byte[] {0}); // warms the sequence: the next nextval writes no WAL, assigns no xid
            db.execute("CREATE FUNCTION " + q + ".park() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                    + " PERFORM pg_advisory_lock(" + PARK_LOCK + "); PERFORM pg_advisory_unlock(" + PARK_LOCK + ");"
                    + " RETURN NEW; END $$");
            db.execute("CREATE TRIGGER park BEFORE INSERT ON " + q + ".message_log_" + id
                    + " FOR EACH ROW EXECUTE FUNCTION " + q + ".park()");
            ExecutorService pool = Executors.newSingleThreadExecutor();
            try (Connection holder = db.connect(); Connection observer = db.connect()) {
                // Control: a naive INSERT relying on the column default has drawn its id but has no xid yet.
                lock(holder);
                Future<?> naive = pool.submit(() -> {
                    db.execute("INSERT INTO " + q + ".message_log_" + id + " (payload) VALUES ('\\x01')");
                    return null;
                });
                Parked control = awaitParked(observer);
                assertThat(control.xid()).as("naive insert: xid while its id is already drawn").isNull();
                unlock(holder);
                naive.get(30, TimeUnit.SECONDS);

                // Sluice's produce statement: parked at the same point, it already holds its xid.
                lock(holder);
                Future<Produced> ours = pool.submit(() -> producer.produce(new byte[] {2}));
                Parked parked = awaitParked(observer);
                long drawn = scalar(observer, "SELECT last_value FROM " + q + ".message_log_" + id + "_id_seq");
                long observerXid = scalar(observer, "SELECT pg_current_xact_id()::text::bigint");
                assertThat(parked.xid()).as("our insert: xid while its id is already drawn").isNotNull();
                assertThat(parked.xid()).isLessThan(observerXid);
                unlock(holder);
                Produced p = ours.get(30, TimeUnit.SECONDS);
                assertThat(p.id()).isEqualTo(drawn);
            } finally {
                pool.shutdownNow();
            }
        }
    }

    private record Parked(int pid, Long xid) {
    }

    private static Parked awaitParked(Connection observer) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            try (Statement s = observer.createStatement(); ResultSet rs = s.executeQuery(
                    "SELECT a.pid, a.backend_xid::text::bigint FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid"
                            + " WHERE l.locktype = 'advisory' AND NOT l.granted AND l.objid = " + PARK_LOCK)) {
                if (rs.next()) {
                    long xid = rs.getLong(2);
                    Long maybeXid = rs.wasNull() ? null : xid;
                    return new Parked(rs.getInt(1), maybeXid);
                }
            }
            Thread.sleep(10);
        }
        throw new AssertionError("the insert never parked in the trigger");
    }

    private static void lock(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("SELECT pg_advisory_lock(" + PARK_LOCK + ")");
        }
    }

    private static void unlock(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("SELECT pg_advisory_unlock(" + PARK_LOCK + ")");
        }
    }

    private static long scalar(Connection c, String sql) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql); ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
