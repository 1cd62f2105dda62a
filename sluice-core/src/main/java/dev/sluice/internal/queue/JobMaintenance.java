package dev.sluice.internal.queue;

import dev.sluice.ErrorCode;
import dev.sluice.QueueMaintenanceReport;
import dev.sluice.SluiceException;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.jdbc.Sql;
import dev.sluice.internal.jdbc.SqlErrors;
import java.sql.SQLException;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * The schema-wide upkeep of the job tables and the operators' writes: the maintenance tick (rescue of
 * expired claims and expiry of unclaimed jobs past their {@code expires_at}, both run by {@link JobEnds}; the
 * dead-letter retention sweep; the retention of run records and events),
 * redrive (revive) and purge of dead jobs. Every statement moves a bounded batch; a tick repeats full batches up to
 * {@link #MAX_ROUNDS}. Stateless apart from the statement texts; one per client.
 */
final class JobMaintenance {
    /** Rows one maintenance statement moves at most; a tick repeats full batches up to {@link #MAX_ROUNDS}. */
    static final int MAINTENANCE_BATCH = 1_000;
    static final int MAX_ROUNDS = 10;
    /** Dead jobs one statement of a purge of the whole queue deletes at most. */
    static final int PURGE_BATCH = 10_000;

    private final Db db;
    private final QueueSql sql;
    private final String channel;
    private final JobEnds ends;

    JobMaintenance(Db db, QueueSql sql, String channel, JobEnds ends) {
        this.db = db;
        this.sql = sql;
        this.channel = channel;
        this.ends = ends;
    }

    /** One maintenance tick over every queue of the schema; see {@code Queue.maintain()}. */
    QueueMaintenanceReport maintain() {
        long[] rescued = rescue();
        return new QueueMaintenanceReport((int) rescued[0], (int) rescued[1], expire(), sweepDead());
    }

    /**
     * Expired claims back to pending (their attempt counted), or to the dead jobs when it was their last attempt;
     * wakes the workers of the queues that got jobs back. Returns {rescued, rescued to dead}.
     */
    long[] rescue() {
        return ends.rescue();
    }

    /** Unclaimed jobs past their {@code expires_at} to the dead jobs; returns how many. */
    int expire() {
        return ends.expire();
    }

    /** Run records past their retention deleted; returns how many. */
    int sweepRuns() {
        return repeat("sweep job runs", sql.runs.sweepRuns);
    }

    /** Events past their retention deleted; returns how many. */
    int sweepEvents() {
        return repeat("sweep job events", sql.runs.sweepEvents);
    }

    /** Dead jobs past their retention deleted; returns how many. */
    int sweepDead() {
        return repeat("sweep dead jobs", sql.sweepDead);
    }

    /** Runs a statement whose one parameter is the batch size until a batch comes back short, at most {@link #MAX_ROUNDS} times. */
    private int repeat(String what, String statement) {
        int total = 0;
        for (int round = 0; round < MAX_ROUNDS; round++) {
            int n = db.autoCommit(what, c -> Sql.update(c, statement, MAINTENANCE_BATCH));
            total += n;
            if (n < MAINTENANCE_BATCH) {
                break;
            }
        }
        return total;
    }

    /** Moves a dead job back to pending; false when absent. */
    boolean revive(String queue, long id) {
        try {
            return db.autoCommit("revive job " + id, c -> Sql.first(c, sql.ends.reviveAll, rs -> rs.getLong(1),
                    queue, Sql.array("int8", new Long[] {id}), channel).isPresent());
        } catch (SluiceException e) {
            if (uniqueViolation(e)) {
                throw new SluiceException(ErrorCode.UNIQUE_KEY_TAKEN, "dead job " + id + " of queue '" + queue
                        + "' cannot be redriven: a live job holds its unique key", e.getCause());
            }
            throw e;
        }
    }

    /**
     * Revives these dead jobs of the queue in one transaction: all of them, or none when any id is not a
     * dead job of the queue ({@link ErrorCode#JOB_NOT_FOUND}, naming them) or a live job holds one's unique
     * key ({@link ErrorCode#UNIQUE_KEY_TAKEN}). Returns how many were revived.
     */
    int reviveAll(String queue, Collection<Long> ids) {
        SortedSet<Long> wanted = new TreeSet<>(ids);
        try {
            return db.transaction("revive jobs", c -> {
                Set<Long> back = new HashSet<>(Sql.list(c, sql.ends.reviveAll, rs -> rs.getLong(1),
                        queue, Sql.array("int8", wanted), channel));
                if (back.size() != wanted.size()) {
                    List<Long> missing = wanted.stream().filter(id -> !back.contains(id)).toList();
                    throw new SluiceException(ErrorCode.JOB_NOT_FOUND, "queue '" + queue + "' has no dead job with id"
                            + (missing.size() == 1 ? " " : "s ") + missing + "; nothing was redriven");
                }
                return back.size();
            });
        } catch (SluiceException e) {
            if (uniqueViolation(e)) {
                throw new SluiceException(ErrorCode.UNIQUE_KEY_TAKEN, "dead jobs of queue '" + queue
                        + "' cannot be redriven: a live job holds the unique key of one of them; nothing was redriven",
                        e.getCause());
            }
            throw e;
        }
    }

    private static boolean uniqueViolation(SluiceException e) {
        return e.getCause() instanceof SQLException se && SqlErrors.UNIQUE_VIOLATION.equals(se.getSQLState());
    }

    /**
     * Redrives every dead job of the queue, a bounded batch per statement and transaction, until a batch moves
     * none; dead jobs whose unique key is taken stay dead. Returns how many were redriven.
     */
    int redriveAll(String queue) {
        int total = 0;
        while (true) {
            int n = db.autoCommit("redrive dead jobs", c -> Sql.list(c, sql.ends.redriveBatch, rs -> rs.getLong(1),
                    queue, MAINTENANCE_BATCH, channel).size());
            total += n;
            if (n == 0) {
                return total;
            }
        }
    }

    /**
     * Deletes dead jobs of the queue: these ids (distinct) in one transaction, all or none — an id that is not a
     * dead job of the queue is {@link ErrorCode#JOB_NOT_FOUND} and deletes nothing — or all when {@code ids} is
     * null, in bounded batches.
     */
    int purgeDead(String queue, List<Long> ids) {
        if (ids != null) {
            SortedSet<Long> wanted = new TreeSet<>(ids);
            return db.transaction("purge dead jobs", c -> {
                Set<Long> gone = new HashSet<>(Sql.list(c, sql.purgeDeadIds, rs -> rs.getLong(1), queue,
                        Sql.array("int8", wanted)));
                if (gone.size() != wanted.size()) {
                    List<Long> missing = wanted.stream().filter(id -> !gone.contains(id)).toList();
                    throw new SluiceException(ErrorCode.JOB_NOT_FOUND, "queue '" + queue + "' has no dead job with id"
                            + (missing.size() == 1 ? " " : "s ") + missing + "; nothing was purged");
                }
                return gone.size();
            });
        }
        int total = 0;
        while (true) {
            // Bounded batches: purging a large dead set never holds one long transaction.
            int n = db.autoCommit("purge dead jobs", c -> Sql.update(c, sql.purgeDeadBatch, queue, PURGE_BATCH));
            total += n;
            if (n == 0) {
                return total;
            }
        }
    }
}
