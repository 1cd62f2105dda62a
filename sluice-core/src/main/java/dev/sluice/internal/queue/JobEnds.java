package dev.sluice.internal.queue;

import static dev.sluice.internal.queue.JobValues.micros;

import dev.sluice.Cancellation;
import dev.sluice.DeadReason;
import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.jdbc.Sql;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Runs the statements that end jobs ({@link EndSql}): each first in its autocommit variant, which ends the jobs
 * without children in one statement, and then — only for what that left — in a transaction that also releases or
 * cancels the children ({@link JobDependencies#release}). A claim that neither variant accepts was lost. Stateless
 * apart from the statement texts; one per client.
 */
final class JobEnds {
    /** Rows one maintenance statement moves at most; a tick repeats full batches up to {@link #MAX_ROUNDS}. */
    static final int BATCH = JobMaintenance.MAINTENANCE_BATCH;
    static final int MAX_ROUNDS = JobMaintenance.MAX_ROUNDS;

    private final Db db;
    private final QueueSql sql;
    private final JobDependencies dependencies;

    JobEnds(Db db, QueueSql sql, JobDependencies dependencies) {
        this.db = db;
        this.sql = sql;
        this.dependencies = dependencies;
    }

    /** One completion: the claim, and the result (null for none). */
    record Finish(long id, UUID token, byte[] result, String resultContentType) {
    }

    /** A finished row: whether it ended cancelled (its cancel was requested) rather than succeeded, and its children. */
    private record Finished(long id, boolean cancelled, boolean hasChildren) {
    }

    /**
     * Ends these claims (distinct ids): succeeded with their results, or cancelled when a cancel was requested. Returns,
     * by id, whether each ended cancelled; ids absent from the map were lost (claim expired or taken over).
     */
    Map<Long, Boolean> finish(List<Finish> batch) {
        Map<Long, Boolean> out = new HashMap<>();
        for (Finished f : db.autoCommit("ack jobs", c -> finishOn(c, sql.ends.finishPlain, batch))) {
            out.put(f.id(), f.cancelled());
        }
        if (out.size() == batch.size()) {
            return out;
        }
        List<Finish> rest = batch.stream().filter(f -> !out.containsKey(f.id())).toList();
        // Jobs with children (or lost claims): end them and release their children in one transaction.
        db.transaction("ack jobs with children", c -> {
            List<Finished> ended = finishOn(c, sql.ends.finish, rest);
            List<Long> parents = new ArrayList<>();
            List<Boolean> failed = new ArrayList<>();
            for (Finished f : ended) {
                if (f.hasChildren()) {
                    parents.add(f.id());
                    failed.add(f.cancelled());
                }
            }
            if (!parents.isEmpty()) {
                dependencies.release(c, parents.toArray(new Long[0]), failed.toArray(new Boolean[0]));
            }
            for (Finished f : ended) {
                out.put(f.id(), f.cancelled());
            }
            return null;
        });
        return out;
    }

    private static List<Finished> finishOn(Connection c, String statement, List<Finish> batch) throws SQLException {
        int n = batch.size();
        Long[] ids = new Long[n];
        Integer[] ti = new Integer[n];
        byte[][] results = new byte[n][];
        String[] types = new String[n];
        Map<UUID, Integer> tokens = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            Finish f = batch.get(i);
            ids[i] = f.id();
            ti[i] = tokens.computeIfAbsent(f.token(), k -> tokens.size() + 1);
            results[i] = f.result();
            types[i] = f.result() == null ? null : f.resultContentType();
        }
        return Sql.list(c, statement, rs -> new Finished(rs.getLong(1), rs.getBoolean(2), rs.getBoolean(3)),
                Sql.array("int8", ids), Sql.array("int4", ti), Sql.array("bytea", results), Sql.array("text", types),
                Sql.array("uuid", tokens.keySet()));
    }

    /**
     * Resolves a claim other than by ack: back to pending after {@code delay} (or after the backoff when
     * {@code delay} is null), or ended — dead on its last attempt, discarded when {@code discard} is set, cancelled
     * when a cancel was requested.
     */
    JobStore.Settled settle(long id, UUID token, Duration delay, String error, boolean discard) {
        Object delayUs = JobInserts.nullable(delay == null ? null : micros(delay));
        Object errorText = error == null ? new Sql.Null(Types.VARCHAR) : error;
        String reason = discard ? DeadReason.DISCARDED.dbValue() : DeadReason.FAILED.dbValue();
        Object[] params = {id, token, discard, errorText, reason, delayUs};
        record Reply(JobStore.Settled settled, boolean hasChildren) {
        }
        Sql.Row<Reply> row = rs -> new Reply(rs.getLong(1) == 1 ? JobStore.Settled.PENDING
                : rs.getLong(2) == 1 ? JobStore.Settled.DEAD
                : rs.getLong(3) == 1 ? JobStore.Settled.CANCELLED : JobStore.Settled.REFUSED, rs.getBoolean(4));
        Reply plain = db.autoCommit("settle job " + id, c -> Sql.first(c, sql.ends.settlePlain, row, params).orElseThrow());
        if (plain.settled() != JobStore.Settled.REFUSED) {
            return plain.settled();
        }
        return db.transaction("settle job " + id, c -> {
            Reply r = Sql.first(c, sql.ends.settle, row, params).orElseThrow();
            if (r.hasChildren()) {
                dependencies.release(c, new Long[] {id}, new Boolean[] {true});
            }
            return r.settled();
        });
    }

    /** Expired claims of every queue: back to pending, or ended; returns {back to pending, ended}. */
    long[] rescue() {
        long back = 0;
        long ended = 0;
        for (int round = 0; round < MAX_ROUNDS; round++) {
            long[] r = db.autoCommit("rescue expired claims", c -> Sql.first(c, sql.ends.rescuePlain,
                    rs -> new long[] {rs.getLong(1), rs.getLong(2)}, BATCH).orElseThrow());
            back += r[0];
            ended += r[1];
            if (r[0] + r[1] < BATCH) {
                break;
            }
        }
        for (int round = 0; round < MAX_ROUNDS; round++) {
            long[] r = db.transaction("rescue expired claims of jobs with children", c -> {
                Object[] reply = Sql.first(c, sql.ends.rescueParents,
                        rs -> new Object[] {rs.getLong(1), rs.getLong(2), rs.getArray(3)}, BATCH).orElseThrow();
                releaseFailed(c, (java.sql.Array) reply[2]);
                return new long[] {(Long) reply[0], (Long) reply[1]};
            });
            back += r[0];
            ended += r[1];
            if (r[0] + r[1] < BATCH) {
                break;
            }
        }
        return new long[] {back, ended};
    }

    /** Unclaimed jobs past their {@code expires_at} to the dead jobs; returns how many. */
    int expire() {
        int total = 0;
        for (int round = 0; round < MAX_ROUNDS; round++) {
            long n = db.autoCommit("move expired jobs", c -> Sql.scalar(c, sql.ends.expirePlain, BATCH));
            total += (int) n;
            if (n < BATCH) {
                break;
            }
        }
        for (int round = 0; round < MAX_ROUNDS; round++) {
            long n = db.transaction("move expired jobs with children", c -> {
                Object[] reply = Sql.first(c, sql.ends.expireParents, rs -> new Object[] {rs.getLong(1), rs.getArray(2)},
                        BATCH).orElseThrow();
                releaseFailed(c, (java.sql.Array) reply[1]);
                return (Long) reply[0];
            });
            total += (int) n;
            if (n < BATCH) {
                break;
            }
        }
        return total;
    }

    /** The children of jobs that just failed (a NULL array: none). */
    private void releaseFailed(Connection c, java.sql.Array parents) throws SQLException {
        if (parents == null) {
            return;
        }
        Long[] ids = (Long[]) parents.getArray();
        Boolean[] failed = new Boolean[ids.length];
        java.util.Arrays.fill(failed, Boolean.TRUE);
        dependencies.release(c, ids, failed);
    }

    /**
     * An operator's cancel: a pending or waiting job ends cancelled at once (its children follow their policy), a
     * running one is flagged.
     *
     * @param ended tells whether the queue has an ended trace of the job (a record or a dead job)
     * @throws SluiceException {@link ErrorCode#JOB_NOT_FOUND} when the queue has no trace of the job at all
     */
    Cancellation cancel(String queue, long id, String reason, java.util.function.LongPredicate ended) {
        Cancellation result = db.transaction("cancel job " + id, c -> {
            Object[] r = Sql.first(c, sql.ends.cancel, rs -> new Object[] {rs.getString(1), rs.getLong(2), rs.getLong(3),
                    rs.getBoolean(4)}, id, queue, reason).orElseThrow();
            if (r[0] == null) {
                return null;
            }
            if ((Long) r[1] == 1) {
                return Cancellation.REQUESTED;
            }
            if ((Boolean) r[3]) {
                dependencies.release(c, new Long[] {id}, new Boolean[] {true});
            }
            return Cancellation.CANCELLED;
        });
        if (result != null) {
            return result;
        }
        if (ended.test(id)) {
            return Cancellation.ALREADY_ENDED;
        }
        throw new SluiceException(ErrorCode.JOB_NOT_FOUND, "queue '" + queue + "' has no job " + id
                + " (not live, not dead, no run record); nothing was cancelled");
    }
}
