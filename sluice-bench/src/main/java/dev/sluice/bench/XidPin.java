package dev.sluice.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Objects;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * An unrelated long transaction: a connection of its own (never from Sluice's pool) that opens a
 * REPEATABLE READ transaction, allocates a transaction id with {@code pg_current_xact_id()} and then
 * stays idle, touching no table, until {@link #close()} rolls it back. While it is open the server's
 * {@code pg_snapshot_xmin} cannot pass its id — what any other application's long transaction does to
 * the server's snapshot xmin, which the fence used to wait for (docs/fence.md).
 *
 * <pre>{@code
 * try (XidPin pin = XidPin.open(jdbcUrl, "sluice-bench-pin")) {
 *     ... // the server's xmin is held at or below pin.xid()
 * }   // rolled back
 * }</pre>
 */
public final class XidPin implements AutoCloseable {
    /** Opens the transaction; its snapshot is taken by the next statement. */
    static final String BEGIN = "BEGIN ISOLATION LEVEL REPEATABLE READ";
    /** Allocates the transaction's id (and takes its snapshot) and names the backend holding it. */
    static final String ALLOCATE = "SELECT pg_current_xact_id()::text, pg_backend_pid()";
    /** Ends the transaction without a trace. */
    static final String ROLLBACK = "ROLLBACK";
    /**
     * Whether the pin's backend still holds its id, as every other session sees it: {@code backend_xid} is
     * the 32-bit form of the 64-bit id, so the low 32 bits are compared.
     */
    static final String HELD = """
            SELECT count(*) FROM pg_stat_activity
             WHERE pid = ? AND backend_xid IS NOT NULL
               AND backend_xid::text::bigint = ?::bigint % 4294967296
            """;
    /** Seconds a statement of the pin may wait for the server before the driver gives up on it. */
    static final int SOCKET_TIMEOUT_SECONDS = 30;
    /** Seconds to wait for the connection to open. */
    static final int CONNECT_TIMEOUT_SECONDS = 10;

    private final Connection connection;
    private final long xid;
    private final int pid;
    private final long allocatedNanos;
    private long releasedNanos;
    private boolean closed;

    private XidPin(Connection connection, long xid, int pid, long allocatedNanos) {
        this.connection = connection;
        this.xid = xid;
        this.pid = pid;
        this.allocatedNanos = allocatedNanos;
    }

    /**
     * Opens a connection of its own to {@code jdbcUrl} (the database Sluice uses, so that its id counts in
     * the same snapshots), begins the transaction and allocates its id.
     *
     * @param jdbcUrl         the server and database
     * @param applicationName what {@code pg_stat_activity} shows for it
     * @throws SQLException          when the connection or a statement fails (the connection is then closed)
     * @throws IllegalStateException when the server returned no id
     */
    public static XidPin open(String jdbcUrl, String applicationName) throws SQLException {
        Objects.requireNonNull(jdbcUrl, "jdbcUrl");
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(jdbcUrl);
        ds.setApplicationName(applicationName);
        ds.setSocketTimeout(SOCKET_TIMEOUT_SECONDS);
        ds.setConnectTimeout(CONNECT_TIMEOUT_SECONDS);
        Connection c = ds.getConnection();
        try {
            c.setAutoCommit(true); // the transaction is the explicit BEGIN's, not the driver's
            try (Statement s = c.createStatement()) {
                s.execute(BEGIN);
                try (ResultSet rs = s.executeQuery(ALLOCATE)) {
                    String id = rs.next() ? rs.getString(1) : null;
                    if (id == null) {
                        throw new IllegalStateException("pg_current_xact_id() returned no transaction id");
                    }
                    return new XidPin(c, Long.parseLong(id), rs.getInt(2), System.nanoTime());
                }
            }
        } catch (SQLException | RuntimeException e) {
            closeQuietly(c, e);
            throw e;
        }
    }

    /** The transaction's 64-bit id ({@code xid8}). */
    public long xid() {
        return xid;
    }

    /** The server process holding it. */
    public int pid() {
        return pid;
    }

    /** Whether {@code observer} (another session) sees the pin's backend holding its id now. */
    public boolean heldAsSeenBy(Connection observer) throws SQLException {
        try (PreparedStatement ps = observer.prepareStatement(HELD)) {
            ps.setInt(1, pid);
            ps.setLong(2, xid);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getLong(1) == 1;
            }
        }
    }

    /** Seconds from the id's allocation to the rollback (up to now while still open). */
    public double heldSeconds() {
        long end = closed ? releasedNanos : System.nanoTime();
        return (end - allocatedNanos) / 1e9;
    }

    /**
     * Rolls the transaction back and closes the connection; idempotent. A connection the server already
     * dropped (a restart, a terminated backend) has no transaction left to end, so a failing rollback is
     * not an error here: the connection is closed either way.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        releasedNanos = System.nanoTime();
        try (Statement s = connection.createStatement()) {
            s.execute(ROLLBACK);
        } catch (SQLException e) {
            // The session is gone or broken: closing the socket ends its transaction on the server.
        } finally {
            closeQuietly(connection, null);
        }
    }

    private static void closeQuietly(Connection c, Throwable failure) {
        try {
            c.close();
        } catch (SQLException e) {
            if (failure != null) {
                failure.addSuppressed(e);
            }
        }
    }
}
