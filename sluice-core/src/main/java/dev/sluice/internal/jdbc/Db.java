package dev.sluice.internal.jdbc;

import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;

/**
 * Connections and the transaction runner: READ COMMITTED, and the whole unit of work replayed on
 * serialization failure, deadlock or lock timeout with small jittered backoff (cap 25 ms, 8 attempts),
 * then a retryable {@link ErrorCode#TRANSACTION_CONFLICT}; replayed at once on another connection when its
 * connection died before the commit. Work run here must have no external effects.
 */
public final class Db {
    public static final int MAX_ATTEMPTS = 8;
    /** How many dead pooled connections one unit of work replaces before it reports the database unavailable. */
    public static final int MAX_BROKEN_REPLAYS = 32;
    private static final long BACKOFF_CAP_NANOS = 25_000_000L;

    private final DataSource dataSource;

    public Db(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    public DataSource dataSource() {
        return dataSource;
    }

    /** Opens a connection, mapping failures to {@link ErrorCode#DATABASE_UNAVAILABLE}. */
    public Connection open() {
        try {
            return dataSource.getConnection();
        } catch (SQLException e) {
            throw new SluiceException(ErrorCode.DATABASE_UNAVAILABLE, "cannot open a database connection: " + e.getMessage(), e);
        }
    }

    /** Runs {@code work} in auto-commit mode (single statements, reads). */
    public <T> T autoCommit(String what, SqlWork<T> work) {
        return autoCommit(what, work, 0);
    }

    /**
     * Like {@link #autoCommit}, for work that may run twice: reads, and writes whose repetition is harmless
     * (a consumer's claim: a first claim that did commit unseen only expires and is taken over). A
     * connection that died under the work (see {@link SqlErrors#isBrokenConnection}) is replaced at once,
     * up to {@link #MAX_BROKEN_REPLAYS} times: after a backend termination or a server restart the pool
     * still holds dead connections, and each fails once.
     */
    public <T> T autoCommitReplayable(String what, SqlWork<T> work) {
        return autoCommit(what, work, MAX_BROKEN_REPLAYS);
    }

    /**
     * A read — statements that change nothing, so running them twice is harmless — in auto-commit mode, replayed at
     * once on another connection when its connection died ({@link #autoCommitReplayable}). Catalog reads, listings
     * and a client's start-up use it: after a backend termination or a server restart every pooled connection fails
     * once, and a {@code consume}, {@code work} or listing must not fail for that.
     */
    public <T> T read(String what, SqlWork<T> work) {
        return autoCommitReplayable(what, work);
    }

    private <T> T autoCommit(String what, SqlWork<T> work, int maxReplays) {
        for (int replays = 0; ; replays++) {
            try (Connection c = open()) {
                c.setAutoCommit(true);
                return work.run(c);
            } catch (SQLException e) {
                if (SqlErrors.isBrokenConnection(e) && replays < maxReplays) {
                    continue;
                }
                throw SqlErrors.map(e, what);
            }
        }
    }

    /**
     * Runs {@code work} in one READ COMMITTED transaction, replaying it on transient conflicts (with
     * backoff) and at once when the connection died before the commit (the transaction cannot have
     * committed; see {@link SqlErrors#isBrokenConnection}). A connection failure during the commit itself
     * is never replayed: its outcome is unknown ({@link ErrorCode#COMMIT_OUTCOME_UNKNOWN}).
     */
    public <T> T transaction(String what, SqlWork<T> work) {
        return transaction(what, work, false);
    }

    /**
     * Like {@link #transaction}, for work written so that running it again after it committed is harmless (a
     * fleet claim under a token chosen before the first run: a second run finds the row the first made). A
     * connection failure during the commit is then replayed too, on another connection, within the same bound
     * as dead connections: a process starting its parts while its connections are terminated must not fail
     * for a commit reply it never got.
     */
    public <T> T idempotentTransaction(String what, SqlWork<T> work) {
        return transaction(what, work, true);
    }

    private <T> T transaction(String what, SqlWork<T> work, boolean replayUnknownCommit) {
        int brokenReplays = 0;
        for (int attempt = 1; ; attempt++) {
            boolean committed = false;
            T result = null;
            try (Connection c = open()) {
                try {
                    // READ COMMITTED is PostgreSQL's default; setting it would cost a round trip per transaction.
                    c.setAutoCommit(false);
                    result = work.run(c);
                    commit(c, what);
                    committed = true;
                } catch (SQLException | RuntimeException e) {
                    rollbackQuietly(c, e);
                    throw e;
                }
            } catch (SQLException e) {
                if (committed) {
                    return result; // only giving the connection back failed
                }
                if (SqlErrors.isTransient(e) && attempt < MAX_ATTEMPTS) {
                    backoff(attempt);
                    continue;
                }
                if (SqlErrors.isBrokenConnection(e) && brokenReplays < MAX_BROKEN_REPLAYS) {
                    brokenReplays++;
                    attempt--;
                    continue;
                }
                throw SqlErrors.map(e, what);
            } catch (SluiceException e) {
                if (replayUnknownCommit && e.code() == ErrorCode.COMMIT_OUTCOME_UNKNOWN && brokenReplays < MAX_BROKEN_REPLAYS) {
                    brokenReplays++;
                    attempt--;
                    continue;
                }
                throw e;
            } catch (RuntimeException e) {
                // A user callback cannot throw SQLException through Function; a wrapped transient failure
                // (serialization, deadlock, lock timeout) still means "replay the whole transaction".
                SQLException transientCause = transientCause(e);
                if (transientCause != null && attempt < MAX_ATTEMPTS) {
                    backoff(attempt);
                    continue;
                }
                if (transientCause != null) {
                    throw SqlErrors.map(transientCause, what);
                }
                throw e;
            }
            return result;
        }
    }

    /** Commits; a connection failure during commit leaves the outcome unknown, which callers must know. */
    public static void commit(Connection c, String what) throws SQLException {
        try {
            c.commit();
        } catch (SQLException e) {
            if (SqlErrors.isConnectionFailure(e)) {
                throw new SluiceException(ErrorCode.COMMIT_OUTCOME_UNKNOWN, what + ": the connection failed during commit", e);
            }
            throw e;
        }
    }

    private static SQLException transientCause(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof SQLException se && SqlErrors.isTransient(se)) {
                return se;
            }
        }
        return null;
    }

    private static void rollbackQuietly(Connection c, Throwable failure) {
        try {
            c.rollback();
        } catch (SQLException e) {
            failure.addSuppressed(e);
        }
    }

    private static void backoff(int attempt) {
        // Downward jitter below an exponential ceiling capped at 25 ms.
        long ceiling = Math.min(BACKOFF_CAP_NANOS, 1_000_000L << Math.min(attempt, 5));
        LockSupport.parkNanos(ThreadLocalRandom.current().nextLong(ceiling / 2, ceiling + 1));
    }
}
