package dev.sluice.internal.queue;

import static dev.sluice.internal.queue.JobValues.micros;

import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.jdbc.Sql;
import dev.sluice.internal.jdbc.SqlErrors;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes new jobs ({@link QueueSql#enqueue}, {@link QueueSql#enqueuePlain}): the bulk path for batches
 * without unique keys, and the unique-key path that reads the live holder's id for every job a unique key
 * turned away. Stateless apart from the statement texts; one per client.
 */
final class JobInserts {
    /** Duplicate unique keys whose holder vanished between insert and read are re-inserted this often. */
    private static final int UNIQUE_RETRIES = 5;

    private final Db db;
    private final QueueSql sql;
    private final String channel;
    private final JobDependencies dependencies;
    /** The channel parameter of an enqueue that sends no wake-up itself ({@code Channels.WAKE_IN_TRANSACTION}). */
    private static final Object NO_WAKE = new Sql.Null(Types.VARCHAR);

    JobInserts(Db db, QueueSql sql, String channel, JobDependencies dependencies) {
        this.db = db;
        this.sql = sql;
        this.channel = channel;
        this.dependencies = dependencies;
    }

    /**
     * Enqueues in a transaction of our own (replayed on transient conflicts). Jobs without unique keys
     * take the bulk path: one auto-commit statement, which is atomic by itself. Sends no wake-up: the caller
     * sends it after the commit ({@code Engine.enqueued}).
     */
    List<Long> enqueue(String queue, List<EncodedJob> jobs) {
        Object none = NO_WAKE;
        if (plain(jobs)) {
            return db.autoCommit("enqueue to queue '" + queue + "'", c -> insertPlain(c, queue, jobs, none));
        }
        return db.transaction("enqueue to queue '" + queue + "'", c -> insertAny(c, queue, jobs, none));
    }

    /**
     * Enqueues on the caller's connection and transaction; never commits. {@code wake}: the transaction sends the
     * queue's wake-up itself (false when the caller sends it after the commit).
     */
    List<Long> enqueueOn(Connection c, String queue, List<EncodedJob> jobs, boolean wake) {
        Object ch = wake ? channel : NO_WAKE;
        try {
            return plain(jobs) ? insertPlain(c, queue, jobs, ch) : insertAny(c, queue, jobs, ch);
        } catch (SQLException e) {
            throw map(e, "enqueue to queue '" + queue + "'");
        }
    }

    /** Whether no job has a unique key and all share one content type and stamps (one handle's batch). */
    static boolean plain(List<EncodedJob> jobs) {
        EncodedJob first = jobs.get(0);
        for (EncodedJob j : jobs) {
            if (j.uniqueKey() != null || j.hasParents() || !j.contentType().equals(first.contentType())
                    || !j.stamps().equals(first.stamps())) {
                return false;
            }
        }
        return true;
    }

    /** The bulk insert ({@link QueueSql#enqueuePlain}); ids in input order. */
    private List<Long> insertPlain(Connection c, String queue, List<EncodedJob> jobs, Object wakeChannel) throws SQLException {
        int n = jobs.size();
        byte[][] p = new byte[n][];
        String[] h = new String[n];
        Integer[] pr = new Integer[n];
        Long[] delay = new Long[n];
        Long[] runAt = new Long[n];
        Long[] expires = new Long[n];
        // Which option arrays any job uses; the others go as NULL instead of n NULL elements.
        boolean hasH = false;
        boolean hasPr = false;
        boolean hasDelay = false;
        boolean hasRunAt = false;
        boolean hasExpires = false;
        for (int k = 0; k < n; k++) {
            EncodedJob j = jobs.get(k);
            p[k] = j.payload();
            h[k] = j.headersJson();
            pr[k] = j.priority();
            delay[k] = j.delay() == null ? null : micros(j.delay());
            runAt[k] = j.runAt() == null ? null : micros(j.runAt());
            expires[k] = j.expiresAt() == null ? null : micros(j.expiresAt());
            hasH |= h[k] != null;
            hasPr |= pr[k] != 0;
            hasDelay |= delay[k] != null;
            hasRunAt |= runAt[k] != null;
            hasExpires |= expires[k] != null;
        }
        EncodedJob.Stamps s = jobs.get(0).stamps();
        List<Long> ids = Sql.list(c, s.keepRunsNs() == null ? sql.enqueuePlain : sql.enqueuePlainKept, rs -> rs.getLong(1),
                wakeChannel, JobStore.wakeKey(queue), queue, jobs.get(0).contentType(), s.visibilityTimeoutNs(),
                s.maxAttempts(), s.backoffBaseNs(), s.backoffMaxNs(), s.deadLetterRetentionNs(), nullable(s.keepRunsNs()),
                nullable(s.keepEventsNs()), s.firstSeq(),
                Sql.array("bytea", p), arrayOrNull("text", hasH, h), arrayOrNull("int4", hasPr, pr),
                arrayOrNull("int8", hasDelay, delay), arrayOrNull("int8", hasRunAt, runAt),
                arrayOrNull("int8", hasExpires, expires));
        if (ids.size() > n) {
            throw new IllegalStateException("got more ids than the " + n + " jobs");
        }
        if (ids.size() != n) {
            throw new IllegalStateException("got " + ids.size() + " ids for " + n + " jobs");
        }
        // Drawn in input order within the statement (see QueueSql); sorting restores it whatever order
        // RETURNING used.
        long[] sorted = ids.stream().mapToLong(Long::longValue).sorted().toArray();
        List<Long> out = new ArrayList<>(n);
        for (long id : sorted) {
            out.add(id);
        }
        return out;
    }

    /** The array, or a typed NULL when {@code used} is false (no job of the batch sets the option). */
    private static Object arrayOrNull(String type, boolean used, Object[] values) {
        return used ? Sql.array(type, values) : new Sql.Null(Types.ARRAY);
    }

    /** A bigint or a typed NULL. */
    static Object nullable(Long value) {
        return value == null ? new Sql.Null(Types.BIGINT) : (Object) value;
    }

    /**
     * Jobs with unique keys, mixed stamps or parents, in the caller's transaction: runs of jobs without parents go
     * through {@link #insert} together, each child through {@link JobDependencies#enqueueChild}, in input order (so
     * a child may name a parent enqueued earlier in the same batch).
     */
    private List<Long> insertAny(Connection c, String queue, List<EncodedJob> jobs, Object wakeChannel) throws SQLException {
        List<Long> out = new ArrayList<>(jobs.size());
        int from = 0;
        for (int i = 0; i <= jobs.size(); i++) {
            if (i == jobs.size() || jobs.get(i).hasParents()) {
                if (i > from) {
                    out.addAll(insertRun(c, queue, jobs.subList(from, i), wakeChannel));
                }
                if (i < jobs.size()) {
                    out.add(dependencies.enqueueChild(c, queue, jobs.get(i)));
                }
                from = i + 1;
            }
        }
        return out;
    }

    /** Jobs without parents: stamps may differ between them, so each run of equal stamps is one insert. */
    private List<Long> insertRun(Connection c, String queue, List<EncodedJob> jobs, Object wakeChannel) throws SQLException {
        List<Long> out = new ArrayList<>(jobs.size());
        int from = 0;
        for (int i = 1; i <= jobs.size(); i++) {
            if (i == jobs.size() || !jobs.get(i).stamps().equals(jobs.get(from).stamps())) {
                out.addAll(insert(c, queue, jobs.subList(from, i), wakeChannel));
                from = i;
            }
        }
        return out;
    }

    private List<Long> insert(Connection c, String queue, List<EncodedJob> jobs, Object wakeChannel) throws SQLException {
        Long[] ids = new Long[jobs.size()];
        List<Integer> todo = new ArrayList<>();
        for (int i = 0; i < jobs.size(); i++) {
            todo.add(i);
        }
        for (int round = 0; !todo.isEmpty(); round++) {
            if (round > UNIQUE_RETRIES) {
                throw new SluiceException(ErrorCode.TRANSACTION_CONFLICT, "enqueue to queue '" + queue
                        + "': the live holders of its unique keys kept changing");
            }
            Map<String, List<Integer>> lost = insertOnce(c, queue, jobs, todo, ids, wakeChannel);
            todo = new ArrayList<>();
            if (lost.isEmpty()) {
                break;
            }
            // A new statement sees the holders that committed while the insert waited for them.
            record Holder(String key, long id) {
            }
            for (Holder holder : Sql.list(c, sql.existingIds, rs -> new Holder(rs.getString(1), rs.getLong(2)),
                    queue, Sql.array("text", lost.keySet()))) {
                for (int i : lost.remove(holder.key())) {
                    ids[i] = holder.id();
                }
            }
            // Holders acked or dead in between: the key is free again, so insert those jobs once more.
            lost.values().forEach(todo::addAll);
            Collections.sort(todo);
        }
        List<Long> out = new ArrayList<>(ids.length);
        Collections.addAll(out, ids);
        return out;
    }

    /** One row of {@link QueueSql#enqueue}: the id drawn, whether it was written, and the job's unique key. */
    private record Inserted(long id, boolean written, String uniqueKey) {
    }

    /** One insert of the jobs at {@code indexes}; returns the unique keys whose jobs were not written. */
    private Map<String, List<Integer>> insertOnce(Connection c, String queue, List<EncodedJob> jobs, List<Integer> indexes,
                                                  Long[] ids, Object wakeChannel) throws SQLException {
        int n = indexes.size();
        byte[][] p = new byte[n][];
        String[] ct = new String[n];
        String[] h = new String[n];
        Integer[] pr = new Integer[n];
        Long[] delay = new Long[n];
        Long[] runAt = new Long[n];
        Long[] expires = new Long[n];
        String[] uk = new String[n];
        for (int k = 0; k < n; k++) {
            EncodedJob j = jobs.get(indexes.get(k));
            p[k] = j.payload();
            ct[k] = j.contentType();
            h[k] = j.headersJson();
            pr[k] = j.priority();
            delay[k] = j.delay() == null ? null : micros(j.delay());
            runAt[k] = j.runAt() == null ? null : micros(j.runAt());
            expires[k] = j.expiresAt() == null ? null : micros(j.expiresAt());
            uk[k] = j.uniqueKey();
        }
        EncodedJob.Stamps s = jobs.get(indexes.get(0)).stamps();
        List<Inserted> rows = Sql.list(c, sql.enqueue, rs -> new Inserted(rs.getLong(1), rs.getBoolean(2), rs.getString(3)),
                wakeChannel, JobStore.wakeKey(queue), Sql.array("bytea", p), Sql.array("text", ct), Sql.array("text", h),
                Sql.array("int4", pr), Sql.array("int8", delay), Sql.array("int8", runAt), Sql.array("int8", expires),
                Sql.array("text", uk), queue, s.visibilityTimeoutNs(), s.maxAttempts(), s.backoffBaseNs(),
                s.backoffMaxNs(), s.deadLetterRetentionNs(), nullable(s.keepRunsNs()), nullable(s.keepEventsNs()), s.firstSeq());
        if (rows.size() != n) {
            throw new IllegalStateException("got " + rows.size() + " results for " + n + " jobs");
        }
        Map<String, List<Integer>> lost = new LinkedHashMap<>();
        for (int k = 0; k < n; k++) {
            Inserted row = rows.get(k);
            int index = indexes.get(k);
            if (row.written()) {
                ids[index] = row.id();
            } else {
                lost.computeIfAbsent(row.uniqueKey(), key -> new ArrayList<>()).add(index);
            }
        }
        return lost;
    }

    static SluiceException map(SQLException e, String what) {
        if (SqlErrors.UNDEFINED_TABLE.equals(e.getSQLState())) {
            return new SluiceException(ErrorCode.SYSTEM_NOT_REGISTERED, what + ": the schema has no job tables", e);
        }
        return SqlErrors.map(e, what);
    }
}
