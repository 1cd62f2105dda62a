package dev.sluice.internal.jdbc;

import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import java.sql.SQLException;

/** Maps {@link SQLException}s to coded {@link SluiceException}s; never swallows the cause. */
public final class SqlErrors {
    public static final String SERIALIZATION_FAILURE = "40001";
    public static final String DEADLOCK_DETECTED = "40P01";
    public static final String LOCK_NOT_AVAILABLE = "55P03";
    public static final String UNIQUE_VIOLATION = "23505";
    public static final String INSUFFICIENT_PRIVILEGE = "42501";
    public static final String UNDEFINED_TABLE = "42P01";

    private SqlErrors() {
    }

    /** Whether the whole transaction may be replayed (serialization failure, deadlock, lock timeout). */
    public static boolean isTransient(SQLException e) {
        String state = e.getSQLState();
        return SERIALIZATION_FAILURE.equals(state) || DEADLOCK_DETECTED.equals(state) || LOCK_NOT_AVAILABLE.equals(state);
    }

    /**
     * Whether this connection died under the statement (terminated backend, server shutdown, reset socket,
     * closed connection): a pool hands out such connections until each has been tried once, so work that
     * did not commit may be replayed at once on another connection. Not: failures to open a connection.
     */
    public static boolean isBrokenConnection(SQLException e) {
        String state = e.getSQLState();
        return "57P01".equals(state) || "57P02".equals(state) || "08006".equals(state) || "08003".equals(state);
    }

    /** Whether the failure is at the connection level (class 08, or no SQLState at all from the driver). */
    public static boolean isConnectionFailure(SQLException e) {
        String state = e.getSQLState();
        return state != null && (state.startsWith("08") || state.equals("57P01") || state.equals("57P02") || state.equals("57P03"));
    }

    /**
     * The longest pause between a polling loop's failed attempts: 1 s while the database is unreachable (a
     * restart or failover is over in seconds, and a reconnect check is cheap), 5 s for other errors.
     */
    public static long maxPollBackoffMillis(Exception e) {
        return e instanceof SluiceException se && se.code() == ErrorCode.DATABASE_UNAVAILABLE ? 1_000 : 5_000;
    }

    /** Maps any SQL failure to a coded exception. */
    public static SluiceException map(SQLException e, String what) {
        String state = e.getSQLState();
        if (isConnectionFailure(e)) {
            return new SluiceException(ErrorCode.DATABASE_UNAVAILABLE, what + ": database unavailable (SQLState " + state + ")", e);
        }
        if (isTransient(e)) {
            return new SluiceException(ErrorCode.TRANSACTION_CONFLICT, what + ": conflicting transaction (SQLState " + state + ")", e);
        }
        if (INSUFFICIENT_PRIVILEGE.equals(state)) {
            return new SluiceException(ErrorCode.PERMISSION_DENIED, what + ": " + e.getMessage(), e);
        }
        return new SluiceException(ErrorCode.DATABASE_ERROR, what + ": SQLState " + state + ": " + e.getMessage(), e);
    }
}
