package dev.sluice.internal.queue;

import static dev.sluice.internal.queue.JobValues.micros;

import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import dev.sluice.internal.jdbc.Sql;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Job dependencies ({@code EnqueueOptions.after}): a child's enqueue, and the release or cancellation of children
 * when parents end. Both run on the caller's connection inside its transaction; see docs/runs.md for the protocol.
 *
 * <p><b>Why it is race-free under READ COMMITTED.</b> A child registers by updating its live parents' rows
 * ({@code dependents + 1}, locked in id order) before it is inserted. A parent's end either comes first — the child's
 * update then finds the row gone and reads how it ended from its record or dead job, in a later statement that sees
 * the committed end — or waits for the child's commit and then sees {@code dependents > 0} on the row's latest
 * version, which sends it down the transactional path: its {@link RunSql#releaseChildren} runs as a new statement
 * whose snapshot holds every committed edge. Children are locked in id order; a parent is always older than its
 * children, so parent-then-child is the one lock order.
 */
final class JobDependencies {
    /** Rounds of a cancellation cascade before it is refused (a chain deeper than any sensible workflow). */
    static final int MAX_ROUNDS = 100_000;

    private final QueueSql sql;
    private final String channel;

    JobDependencies(QueueSql sql, String channel) {
        this.sql = sql;
        this.channel = channel;
    }

    /**
     * Enqueues one child on {@code c} (in a transaction): waiting while a parent is live, pending when every parent
     * already succeeded, cancelled at once when one failed and its policy is {@code cancel}. Returns its id (for a
     * unique key a live job holds, that job's id).
     *
     * @throws SluiceException {@link ErrorCode#PARENT_NOT_FOUND} naming the ids that are neither live nor ended on record
     */
    long enqueueChild(Connection c, String queue, EncodedJob job) throws SQLException {
        long[] parents = job.after();
        Long[] boxed = JobClaims.boxed(parents);
        Set<Long> live = new HashSet<>(Sql.list(c, sql.runs.lockParents, rs -> rs.getLong(1), Sql.array("int8", boxed)));
        List<Long> rest = new ArrayList<>();
        for (long p : parents) {
            if (!live.contains(p)) {
                rest.add(p);
            }
        }
        Long failedParent = null;
        String failedStatus = null;
        if (!rest.isEmpty()) {
            Map<Long, String> ended = new HashMap<>();
            for (Object[] row : Sql.list(c, sql.runs.parentStatus, rs -> new Object[] {rs.getLong(1), rs.getString(2)},
                    Sql.array("int8", rest), Sql.array("int8", rest))) {
                ended.put((Long) row[0], (String) row[1]);
            }
            List<Long> missing = rest.stream().filter(p -> !ended.containsKey(p)).toList();
            if (!missing.isEmpty()) {
                throw new SluiceException(ErrorCode.PARENT_NOT_FOUND, "no job with id" + (missing.size() == 1 ? " " : "s ")
                        + abbreviated(missing) + " is live, dead or on record; a parent that may finish before its child is"
                        + " enqueued must keep runs (QueueOptions.keepRuns); nothing was enqueued");
            }
            for (long p : rest) {
                String status = ended.get(p);
                if (!"succeeded".equals(status) && failedParent == null) {
                    failedParent = p;
                    failedStatus = status;
                }
            }
        }
        boolean doomed = failedParent != null && "cancel".equals(job.onParentFailure());
        int left = live.size();
        String state = doomed || left > 0 ? "waiting" : "pending";
        EncodedJob.Stamps s = job.stamps();
        Object delay = JobInserts.nullable(job.delay() == null ? null : micros(job.delay()));
        Object runAt = JobInserts.nullable(job.runAt() == null ? null : micros(job.runAt()));
        Object expires = JobInserts.nullable(job.expiresAt() == null ? null : micros(job.expiresAt()));
        List<Long> ids = Sql.list(c, sql.enqueueChild, rs -> rs.getLong(1), channel, JobStore.wakeKey(queue), queue,
                job.payload(), job.contentType(), job.headersJson() == null ? new Sql.Null(Types.VARCHAR) : job.headersJson(),
                job.priority(), delay, delay, runAt, runAt, expires, s.visibilityTimeoutNs(), s.maxAttempts(),
                s.backoffBaseNs(), s.backoffMaxNs(), s.deadLetterRetentionNs(), JobInserts.nullable(s.keepRunsNs()),
                JobInserts.nullable(s.keepEventsNs()), s.firstSeq(),
                job.uniqueKey() == null ? new Sql.Null(Types.VARCHAR) : job.uniqueKey(), state, doomed ? 0 : left,
                job.onParentFailure());
        if (ids.isEmpty()) {
            // A live job holds the unique key: its id, nothing written (the parents' counts only send their ends
            // down the transactional path once).
            return Sql.first(c, sql.existingIds, rs -> rs.getLong(2), queue, Sql.array("text", List.of(job.uniqueKey())))
                    .orElseThrow(() -> new SluiceException(ErrorCode.TRANSACTION_CONFLICT, "enqueue to queue '" + queue
                            + "': the live holder of the unique key vanished; retry"));
        }
        long id = ids.get(0);
        if (doomed) {
            cancel(c, new Long[] {id}, new String[] {"parent job " + failedParent + " ended " + failedStatus});
        } else if (left > 0) {
            List<Long> liveParents = new ArrayList<>(live);
            Sql.update(c, sql.runs.insertEdges, id, Sql.array("int8", liveParents));
        }
        return id;
    }

    /**
     * The children of parents that just ended on {@code c} (in the same transaction): released by successes (and by
     * failures under {@code run}), cancelled by failures under {@code cancel} — and so on down their own children.
     *
     * @param parents the ended parents that had children
     * @param failed  per parent: whether it failed (dead, discarded or cancelled)
     */
    void release(Connection c, Long[] parents, Boolean[] failed) throws SQLException {
        Long[] ids = parents;
        Boolean[] flags = failed;
        for (int round = 0; ids.length > 0; round++) {
            if (round >= MAX_ROUNDS) {
                throw new SluiceException(ErrorCode.TRANSACTION_CONFLICT, "a cancellation cascade went deeper than "
                        + MAX_ROUNDS + " levels; nothing was changed");
            }
            record Doomed(Long[] children, Long[] parents) {
            }
            Doomed d = Sql.first(c, sql.runs.releaseChildren, rs -> new Doomed(longs(rs.getArray(2)), longs(rs.getArray(3))),
                    Sql.array("int8", ids), Sql.array("bool", flags)).orElseThrow();
            if (d.children().length == 0) {
                return;
            }
            String[] reasons = new String[d.children().length];
            for (int i = 0; i < reasons.length; i++) {
                reasons[i] = "parent job " + d.parents()[i] + " did not succeed";
            }
            ids = cancel(c, d.children(), reasons);
            flags = new Boolean[ids.length];
            Arrays.fill(flags, Boolean.TRUE);
        }
    }

    /** Cancels waiting jobs ({@link RunSql#cancelWaiting}); returns those that have children of their own. */
    private Long[] cancel(Connection c, Long[] ids, String[] reasons) throws SQLException {
        List<Long> parents = new ArrayList<>();
        for (Object[] row : Sql.list(c, sql.runs.cancelWaiting, rs -> new Object[] {rs.getLong(1), rs.getBoolean(2)},
                Sql.array("int8", ids), Sql.array("text", reasons))) {
            if ((Boolean) row[1]) {
                parents.add((Long) row[0]);
            }
        }
        return parents.toArray(new Long[0]);
    }

    private static Long[] longs(java.sql.Array a) throws SQLException {
        return a == null ? new Long[0] : (Long[]) a.getArray();
    }

    private static String abbreviated(List<Long> ids) {
        return ids.size() <= 10 ? ids.toString() : ids.subList(0, 10) + " and " + (ids.size() - 10) + " more";
    }
}
