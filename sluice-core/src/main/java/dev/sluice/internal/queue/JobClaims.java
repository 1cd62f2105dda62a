package dev.sluice.internal.queue;

import static dev.sluice.internal.queue.JobValues.instant;
import static dev.sluice.internal.queue.JobValues.micros;

import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.jdbc.Sql;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * Claims and what a claim's holder does with it that is not an end: claim, the plain batched ack (jobs whose end
 * needs nothing else), heartbeat, release (one or a batch), and the probe of the next due job; the ends with records,
 * results, retries and children are {@link JobEnds}'. Every statement but the claim and the probe carries the
 * validity predicate (see {@link QueueSql}). Stateless apart from the statement texts; one per client.
 */
final class JobClaims {
    private final Db db;
    private final QueueSql sql;
    private final String channel;

    JobClaims(Db db, QueueSql sql, String channel) {
        this.db = db;
        this.sql = sql;
        this.channel = channel;
    }

    /** Claims up to {@code n} due jobs in claim order among those at or above the bounds ({@link ClaimHints}). */
    List<JobStore.Claimed> claim(String queue, int n, String workerId, ClaimHints.Bounds bounds) {
        UUID token = UUID.randomUUID();
        List<JobStore.Claimed> out = db.autoCommitReplayable("claim from queue '" + queue + "'", c -> {
            List<JobStore.Claimed> rows = new ArrayList<>();
            // Bound by hand, not with Sql.bind: the bounds go as primitive arrays (sent in binary), the
            // claim being the worker's hottest statement.
            try (PreparedStatement ps = c.prepareStatement(sql.claim)) {
                ps.setString(1, queue);
                ps.setString(2, queue);
                ps.setObject(3, bounds.priorities());
                ps.setObject(4, bounds.fromMicros());
                ps.setString(5, queue);
                ps.setInt(6, n);
                ps.setInt(7, n);
                ps.setString(8, workerId);
                ps.setObject(9, token);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        // The claim's hot loop: timestamps read as epoch microseconds (no Calendar), the token known.
                        rows.add(new JobStore.Claimed(rs.getLong(1), queue, rs.getBytes(2), rs.getString(3),
                                dev.sluice.internal.text.Headers.decode(rs.getString(4)), rs.getInt(5), micros(rs, 6), rs.getInt(7), rs.getInt(8),
                                rs.getLong(9), token, micros(rs, 11), rs.getString(12), micros(rs, 13), rs.getBoolean(14)));
                    }
                }
            }
            return rows;
        });
        // UPDATE … RETURNING does not keep the order of the picked rows; restore the claim order.
        out.sort((a, b) -> a.priority() != b.priority() ? Integer.compare(b.priority(), a.priority())
                : a.runAt().equals(b.runAt()) ? Long.compare(a.id(), b.id()) : a.runAt().compareTo(b.runAt()));
        return out;
    }

    /** The earliest {@code run_at} of the queue's claimable pending jobs (null when none), and the database's now. */
    JobStore.NextDue nextDue(String queue) {
        return db.autoCommitReplayable("probe queue '" + queue + "'", c -> Sql.first(c, sql.nextDue,
                rs -> new JobStore.NextDue(instant(rs.getTimestamp(1)), instant(rs.getTimestamp(2))),
                queue, queue, queue).orElseThrow());
    }

    /** The reply of {@link QueueSql#ackBatch}: how many rows were deleted, and which when not all were. */
    private record AckReply(long count, Long[] some) {
    }

    /**
     * Deletes the rows among {@code ids}/{@code tokens} (pairwise) whose claim is still valid, in one
     * statement; returns the ids it deleted. The others change nothing (their claim was lost).
     */
    Set<Long> ackAll(long[] ids, UUID[] tokens) {
        // Distinct tokens (one per claim in the batch) and each ack's index into them.
        Map<UUID, Integer> index = new LinkedHashMap<>();
        Integer[] ti = new Integer[ids.length];
        for (int i = 0; i < ids.length; i++) {
            ti[i] = index.computeIfAbsent(tokens[i], k -> index.size() + 1);
        }
        AckReply reply = db.autoCommit("ack jobs", c -> Sql.first(c, sql.ackBatch, rs -> {
            java.sql.Array some = rs.getArray(2);
            return new AckReply(rs.getLong(1), some == null ? null : (Long[]) some.getArray());
        }, Sql.array("int8", boxed(ids)), Sql.array("int4", ti), Sql.array("uuid", index.keySet()), ids.length).orElseThrow());
        Set<Long> deleted = new HashSet<>();
        if (reply.count() == ids.length) {
            for (long id : ids) {
                deleted.add(id);
            }
        } else if (reply.some() != null) {
            Collections.addAll(deleted, reply.some());
        }
        return deleted;
    }

    /** Gives back the claims still valid among {@code ids}/{@code tokens} unfinished (see {@link #release}); returns how many. */
    int releaseAll(long[] ids, UUID[] tokens) {
        if (ids.length == 0) {
            return 0;
        }
        return db.autoCommit("release jobs", c -> (int) Sql.scalar(c, sql.releaseBatch,
                Sql.array("int8", boxed(ids)), Sql.array("uuid", tokens), channel));
    }

    /** Extends the claims still valid among {@code ids}/{@code tokens}; returns their new expiry (and cancel flag) by id. */
    Map<Long, JobStore.Beat> heartbeat(long[] ids, UUID[] tokens) {
        return db.autoCommitReplayable("heartbeat jobs", c -> {
            Map<Long, JobStore.Beat> renewed = new HashMap<>();
            for (Object[] r : Sql.list(c, sql.heartbeat, rs -> new Object[] {rs.getLong(1),
                    new JobStore.Beat(instant(rs.getTimestamp(2)), rs.getBoolean(3))},
                    Sql.array("int8", boxed(ids)), Sql.array("uuid", tokens))) {
                renewed.put((Long) r[0], (JobStore.Beat) r[1]);
            }
            return renewed;
        });
    }

    /** Gives a claim back unfinished: pending again at its old place, the attempt not counted. */
    boolean release(long id, UUID token) {
        return db.autoCommit("release job " + id, c -> Sql.scalar(c, sql.release, id, token, channel) == 1);
    }

    static Long[] boxed(long[] ids) {
        Long[] boxed = new Long[ids.length];
        for (int i = 0; i < ids.length; i++) {
            boxed[i] = ids[i];
        }
        return boxed;
    }
}
