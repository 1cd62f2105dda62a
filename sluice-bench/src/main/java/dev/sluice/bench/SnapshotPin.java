package dev.sluice.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Objects;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * An unrelated long reader: a connection of its own (never from Sluice's pool) that opens a REPEATABLE READ
 * transaction, reads one row of a table to take its snapshot, and then stays idle in the transaction until
 * {@link #close()} rolls it back. While it is open its {@code backend_xmin} holds the database's vacuum horizon:
 * no row deleted or updated after it began can be vacuumed away, in any table of the database — the MVCC stress
 * that makes {@code SKIP LOCKED} queues wade through dead tuples. Unlike {@link XidPin} it takes no transaction
 * id (a pure reader, as a report or a forgotten {@code psql} session would be).
 */
final class SnapshotPin implements AutoCloseable {
    /** What {@code pg_stat_activity.application_name} shows for the pin. */
    static final String APPLICATION_NAME = "sluice-bench-snapshot-pin";
    /** Whether the pin's backend still holds a snapshot, as every other session sees it. */
    private static final String HELD = "SELECT count(*) FROM pg_stat_activity WHERE pid = ? AND backend_xmin IS NOT NULL"
            + " AND state = 'idle in transaction'";

    private final Connection connection;
    private final int pid;
    private final String xmin;
    private final long openedNanos;
    private long closedNanos;
    private boolean closed;

    private SnapshotPin(Connection connection, int pid, String xmin, long openedNanos) {
        this.connection = connection;
        this.pid = pid;
        this.xmin = xmin;
        this.openedNanos = openedNanos;
    }

    /**
     * Opens the connection, begins the transaction and reads {@code table} (quoted, schema-qualified) to take
     * the snapshot.
     */
    static SnapshotPin open(String jdbcUrl, String table) throws SQLException {
        Objects.requireNonNull(jdbcUrl, "jdbcUrl");
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(jdbcUrl);
        ds.setApplicationName(APPLICATION_NAME);
        ds.setSocketTimeout(XidPin.SOCKET_TIMEOUT_SECONDS);
        ds.setConnectTimeout(XidPin.CONNECT_TIMEOUT_SECONDS);
        Connection c = ds.getConnection();
        try {
            c.setAutoCommit(true); // the transaction is the explicit BEGIN's
            try (Statement s = c.createStatement()) {
                s.execute("BEGIN ISOLATION LEVEL REPEATABLE READ");
                try (ResultSet rs = s.executeQuery("SELECT count(*) FROM (SELECT 1 FROM " + table + " LIMIT 1) t")) {
                    rs.next();
                }
                try (ResultSet rs = s.executeQuery("SELECT pg_backend_pid(), pg_snapshot_xmin(pg_current_snapshot())::text")) {
                    rs.next();
                    return new SnapshotPin(c, rs.getInt(1), rs.getString(2), System.nanoTime());
                }
            }
        } catch (SQLException | RuntimeException e) {
            try {
                c.close();
            } catch (SQLException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /** The xmin of the pin's snapshot (the horizon it holds). */
    String xmin() {
        return xmin;
    }

    /** Whether {@code observer} sees the pin's backend idle in its transaction with its snapshot. */
    boolean heldAsSeenBy(Connection observer) throws SQLException {
        try (PreparedStatement ps = observer.prepareStatement(HELD)) {
            ps.setInt(1, pid);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getLong(1) == 1;
            }
        }
    }

    /** Seconds from the snapshot to the rollback (up to now while open). */
    double heldSeconds() {
        return ((closed ? closedNanos : System.nanoTime()) - openedNanos) / 1e9;
    }

    /** Rolls back and closes; idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        closedNanos = System.nanoTime();
        try (Statement s = connection.createStatement()) {
            s.execute("ROLLBACK");
        } catch (SQLException e) {
            // The session is gone: closing the socket ends its transaction.
        } finally {
            try {
                connection.close();
            } catch (SQLException e) {
                // Closed either way.
            }
        }
    }
}
