package dev.sluice.internal.queue;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.DeadReason;
import dev.sluice.ErrorCode;
import dev.sluice.QueueMaintenanceReport;
import dev.sluice.SluiceException;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.jdbc.SqlErrors;
import dev.sluice.internal.notify.Channels;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Runs the job-queue statements of one schema ({@link QueueSql}) that write: enqueue, claims and handle
 * operations, maintenance, revive and purge. Operator reads are in {@link JobListing}. Stateless apart
 * from the statement texts; one per client. See docs/queues.md.
 */
public final class JobStore {
    /** Rows one maintenance statement moves at most; a tick repeats full batches up to {@link #MAX_ROUNDS}. */
    static final int MAINTENANCE_BATCH = 1_000;
    static final int MAX_ROUNDS = 10;
    /** Duplicate unique keys whose holder vanished between insert and read are re-inserted this often. */
    private static final int UNIQUE_RETRIES = 5;
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Db db;
    private final QueueSql sql;
    private final String channel;
    private final JobListing listing;

    /** The store of one installation schema (statement texts built here, once). */
    public JobStore(Db db, String schema) {
        this.db = db;
        this.sql = new QueueSql(schema);
        this.channel = Channels.forSchema(schema);
        this.listing = new JobListing(db, sql);
    }

    /** The operator reads of the same schema: one job, pages of jobs and dead jobs, counts. */
    public JobListing listing() {
        return listing;
    }

    /** The notification payload that wakes the workers of {@code queue}. */
    public static String wakeKey(String queue) {
        return QueueSql.WAKE_PREFIX + queue;
    }

    // ------------------------------------------------------------------ enqueue

    /**
     * Enqueues in a transaction of our own (replayed on transient conflicts). Jobs without unique keys
     * take the bulk path: one auto-commit statement, which is atomic by itself.
     */
    public List<Long> enqueue(String queue, List<EncodedJob> jobs) {
        if (plain(jobs)) {
            return db.autoCommit("enqueue to queue '" + queue + "'", c -> insertPlain(c, queue, jobs));
        }
        return db.transaction("enqueue to queue '" + queue + "'", c -> insert(c, queue, jobs));
    }

    /** Enqueues on the caller's connection and transaction; never commits. */
    public List<Long> enqueueOn(Connection c, String queue, List<EncodedJob> jobs) {
        try {
            return plain(jobs) ? insertPlain(c, queue, jobs) : insert(c, queue, jobs);
        } catch (SQLException e) {
            throw map(e, "enqueue to queue '" + queue + "'");
        }
    }

    /** Whether no job has a unique key and all share one content type and stamps (one handle's batch). */
    private static boolean plain(List<EncodedJob> jobs) {
        EncodedJob first = jobs.get(0);
        for (EncodedJob j : jobs) {
            if (j.uniqueKey() != null || !j.contentType().equals(first.contentType()) || !j.stamps().equals(first.stamps())) {
                return false;
            }
        }
        return true;
    }

    /** The bulk insert ({@link QueueSql#enqueuePlain}); ids in input order. */
    private List<Long> insertPlain(Connection c, String queue, List<EncodedJob> jobs) throws SQLException {
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
        long[] ids = new long[n];
        try (PreparedStatement ps = c.prepareStatement(sql.enqueuePlain)) {
            int i = 1;
            ps.setString(i++, channel);
            ps.setString(i++, wakeKey(queue));
            ps.setString(i++, queue);
            ps.setString(i++, jobs.get(0).contentType());
            ps.setLong(i++, s.visibilityTimeoutNs());
            ps.setInt(i++, s.maxAttempts());
            ps.setLong(i++, s.backoffBaseNs());
            ps.setLong(i++, s.backoffMaxNs());
            ps.setLong(i++, s.deadLetterRetentionNs());
            ps.setArray(i++, c.createArrayOf("bytea", p));
            setArrayOrNull(c, ps, i++, "text", hasH ? h : null);
            setArrayOrNull(c, ps, i++, "int4", hasPr ? pr : null);
            setArrayOrNull(c, ps, i++, "int8", hasDelay ? delay : null);
            setArrayOrNull(c, ps, i++, "int8", hasRunAt ? runAt : null);
            setArrayOrNull(c, ps, i, "int8", hasExpires ? expires : null);
            int k = 0;
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    if (k == n) {
                        throw new IllegalStateException("got more ids than the " + n + " jobs");
                    }
                    ids[k++] = rs.getLong(1);
                }
            }
            if (k != n) {
                throw new IllegalStateException("got " + k + " ids for " + n + " jobs");
            }
        }
        // Drawn in input order within the statement (see QueueSql); sorting restores it whatever order
        // RETURNING used.
        java.util.Arrays.sort(ids);
        List<Long> out = new ArrayList<>(n);
        for (long id : ids) {
            out.add(id);
        }
        return out;
    }

    private static void setArrayOrNull(Connection c, PreparedStatement ps, int index, String type, Object[] values)
            throws SQLException {
        if (values == null) {
            ps.setNull(index, java.sql.Types.ARRAY);
        } else {
            ps.setArray(index, c.createArrayOf(type, values));
        }
    }

    private List<Long> insert(Connection c, String queue, List<EncodedJob> jobs) throws SQLException {
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
            Map<String, List<Integer>> lost = insertOnce(c, queue, jobs, todo, ids);
            todo = new ArrayList<>();
            if (lost.isEmpty()) {
                break;
            }
            // A new statement sees the holders that committed while the insert waited for them.
            try (PreparedStatement ps = c.prepareStatement(sql.existingIds)) {
                ps.setString(1, queue);
                ps.setArray(2, c.createArrayOf("text", lost.keySet().toArray()));
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        for (int i : lost.remove(rs.getString(1))) {
                            ids[i] = rs.getLong(2);
                        }
                    }
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

    /** One insert of the jobs at {@code indexes}; returns the unique keys whose jobs were not written. */
    private Map<String, List<Integer>> insertOnce(Connection c, String queue, List<EncodedJob> jobs, List<Integer> indexes,
                                                  Long[] ids) throws SQLException {
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
        Map<String, List<Integer>> lost = new LinkedHashMap<>();
        try (PreparedStatement ps = c.prepareStatement(sql.enqueue)) {
            int i = 1;
            ps.setString(i++, channel);
            ps.setString(i++, wakeKey(queue));
            ps.setArray(i++, c.createArrayOf("bytea", p));
            ps.setArray(i++, c.createArrayOf("text", ct));
            ps.setArray(i++, c.createArrayOf("text", h));
            ps.setArray(i++, c.createArrayOf("int4", pr));
            ps.setArray(i++, c.createArrayOf("int8", delay));
            ps.setArray(i++, c.createArrayOf("int8", runAt));
            ps.setArray(i++, c.createArrayOf("int8", expires));
            ps.setArray(i++, c.createArrayOf("text", uk));
            ps.setString(i++, queue);
            ps.setLong(i++, s.visibilityTimeoutNs());
            ps.setInt(i++, s.maxAttempts());
            ps.setLong(i++, s.backoffBaseNs());
            ps.setLong(i++, s.backoffMaxNs());
            ps.setLong(i, s.deadLetterRetentionNs());
            int k = 0;
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    int index = indexes.get(k++);
                    if (rs.getBoolean(2)) {
                        ids[index] = rs.getLong(1);
                    } else {
                        lost.computeIfAbsent(rs.getString(3), key -> new ArrayList<>()).add(index);
                    }
                }
            }
            if (k != n) {
                throw new IllegalStateException("got " + k + " results for " + n + " jobs");
            }
        }
        return lost;
    }

    static long micros(Duration d) {
        return Math.addExact(Math.multiplyExact(d.getSeconds(), 1_000_000L), d.getNano() / 1_000);
    }

    static long micros(Instant t) {
        return Math.addExact(Math.multiplyExact(t.getEpochSecond(), 1_000_000L), t.getNano() / 1_000);
    }

    // ------------------------------------------------------------------ claims

    /** A claimed row, as the claim statement returns it. */
    public record Claimed(long id, String queue, byte[] payload, String contentType, Map<String, String> headers,
                          int priority, Instant runAt, int attempt, int maxAttempts, long visibilityTimeoutNs, UUID token,
                          Instant claimExpiresAt, String uniqueKey, Instant createdAt) {
    }

    /** Claims up to {@code n} due jobs in claim order (one autocommit statement), scanning every due job. */
    public List<Claimed> claim(String queue, int n, String workerId) {
        return claim(queue, n, workerId, ClaimHints.Bounds.NONE);
    }

    /** Claims up to {@code n} due jobs in claim order among those at or above the bounds ({@link ClaimHints}). */
    List<Claimed> claim(String queue, int n, String workerId, ClaimHints.Bounds bounds) {
        UUID token = UUID.randomUUID();
        List<Claimed> out = db.autoCommitReplayable("claim from queue '" + queue + "'", c -> {
            List<Claimed> rows = new ArrayList<>();
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
                        // The claim's hot loop: timestamps read as OffsetDateTime (no Calendar), the token known.
                        rows.add(new Claimed(rs.getLong(1), queue, rs.getBytes(2), rs.getString(3), headers(rs.getString(4)),
                                rs.getInt(5), micros(rs, 6), rs.getInt(7), rs.getInt(8), rs.getLong(9),
                                token, micros(rs, 11), rs.getString(12), micros(rs, 13)));
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

    /** When the next pending job of the queue is due (by the database clock), and the database's now. */
    public record NextDue(Instant at, Instant now) {
    }

    /** The earliest {@code run_at} of the queue's claimable pending jobs (null when none). */
    public NextDue nextDue(String queue) {
        return db.autoCommitReplayable("probe queue '" + queue + "'", c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.nextDue)) {
                ps.setString(1, queue);
                ps.setString(2, queue);
                ps.setString(3, queue);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return new NextDue(instant(rs.getTimestamp(1)), instant(rs.getTimestamp(2)));
                }
            }
        });
    }

    /** Deletes the row if the claim is still valid. */
    public boolean ack(long id, UUID token) {
        return db.autoCommit("ack job " + id, c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.ack)) {
                ps.setLong(1, id);
                ps.setObject(2, token);
                return ps.executeUpdate() == 1;
            }
        });
    }

    /**
     * Deletes the rows among {@code ids}/{@code tokens} (pairwise) whose claim is still valid, in one
     * statement; returns the ids it deleted. The others change nothing (their claim was lost).
     */
    public java.util.Set<Long> ackAll(long[] ids, UUID[] tokens) {
        // Distinct tokens (one per claim in the batch) and each ack's index into them.
        Map<UUID, Integer> index = new java.util.LinkedHashMap<>();
        int[] ti = new int[ids.length];
        for (int i = 0; i < ids.length; i++) {
            ti[i] = index.computeIfAbsent(tokens[i], k -> index.size() + 1);
        }
        return db.autoCommit("ack jobs", c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.ackBatch)) {
                ps.setArray(1, c.createArrayOf("int8", boxed(ids)));
                ps.setArray(2, c.createArrayOf("int4", java.util.Arrays.stream(ti).boxed().toArray(Integer[]::new)));
                ps.setArray(3, c.createArrayOf("uuid", index.keySet().toArray()));
                ps.setInt(4, ids.length);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    java.util.Set<Long> deleted = new java.util.HashSet<>();
                    if (rs.getLong(1) == ids.length) {
                        for (long id : ids) {
                            deleted.add(id);
                        }
                        return deleted;
                    }
                    java.sql.Array some = rs.getArray(2);
                    if (some != null) {
                        for (Long id : (Long[]) some.getArray()) {
                            deleted.add(id);
                        }
                    }
                    return deleted;
                }
            }
        });
    }

    /** Gives back the claims still valid among {@code ids}/{@code tokens} unfinished (see {@link #release}); returns how many. */
    public int releaseAll(long[] ids, UUID[] tokens) {
        if (ids.length == 0) {
            return 0;
        }
        return db.autoCommit("release jobs", c -> {
            Long[] boxed = boxed(ids);
            try (PreparedStatement ps = c.prepareStatement(sql.releaseBatch)) {
                ps.setArray(1, c.createArrayOf("int8", boxed));
                ps.setArray(2, c.createArrayOf("uuid", tokens));
                ps.setString(3, channel);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return (int) rs.getLong(1);
                }
            }
        });
    }

    private static Long[] boxed(long[] ids) {
        Long[] boxed = new Long[ids.length];
        for (int i = 0; i < ids.length; i++) {
            boxed[i] = ids[i];
        }
        return boxed;
    }

    /** Extends the claims still valid among {@code ids}/{@code tokens}; returns their new expiry by id. */
    public Map<Long, Instant> heartbeat(long[] ids, UUID[] tokens) {
        return db.autoCommitReplayable("heartbeat jobs", c -> {
            Map<Long, Instant> renewed = new HashMap<>();
            Long[] boxed = new Long[ids.length];
            for (int i = 0; i < ids.length; i++) {
                boxed[i] = ids[i];
            }
            try (PreparedStatement ps = c.prepareStatement(sql.heartbeat)) {
                ps.setArray(1, c.createArrayOf("int8", boxed));
                ps.setArray(2, c.createArrayOf("uuid", tokens));
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        renewed.put(rs.getLong(1), instant(rs.getTimestamp(2)));
                    }
                }
            }
            return renewed;
        });
    }

    /** What a settle did: back to pending, or moved to the dead jobs; neither when the claim was not valid. */
    public enum Settled { PENDING, DEAD, REFUSED }

    /**
     * Resolves a claim other than by ack: back to pending after {@code delay} (or after the backoff when
     * {@code delay} is null), or dead when it was the last attempt or {@code discard} is set.
     */
    public Settled settle(long id, UUID token, Duration delay, String error, boolean discard) {
        return db.autoCommit("settle job " + id, c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.settle)) {
                Long delayUs = delay == null ? null : micros(delay);
                int i = 1;
                ps.setLong(i++, id);
                ps.setObject(i++, token);
                ps.setBoolean(i++, discard);
                ps.setString(i++, error);
                ps.setString(i++, discard ? DeadReason.DISCARDED.dbValue() : DeadReason.FAILED.dbValue());
                ps.setObject(i++, delayUs, java.sql.Types.BIGINT);
                ps.setObject(i++, delayUs, java.sql.Types.BIGINT);
                ps.setString(i++, error);
                ps.setBoolean(i++, discard);
                ps.setString(i, channel);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return rs.getLong(1) == 1 ? Settled.PENDING : rs.getLong(2) == 1 ? Settled.DEAD : Settled.REFUSED;
                }
            }
        });
    }

    /** Gives a claim back unfinished: pending again at its old place, the attempt not counted. */
    public boolean release(long id, UUID token) {
        return db.autoCommit("release job " + id, c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.release)) {
                ps.setLong(1, id);
                ps.setObject(2, token);
                ps.setString(3, channel);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return rs.getLong(1) == 1;
                }
            }
        });
    }

    // ------------------------------------------------------------------ maintenance

    /** One maintenance tick over every queue of the schema; see {@code Queue.maintain()}. */
    public QueueMaintenanceReport maintain() {
        int rescued = 0;
        int rescuedToDead = 0;
        for (int round = 0; round < MAX_ROUNDS; round++) {
            long[] r = db.autoCommit("rescue expired claims", c -> {
                try (PreparedStatement ps = c.prepareStatement(sql.rescue)) {
                    ps.setInt(1, MAINTENANCE_BATCH);
                    ps.setString(2, channel);
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        return new long[] {rs.getLong(1), rs.getLong(2)};
                    }
                }
            });
            rescued += (int) r[0];
            rescuedToDead += (int) r[1];
            if (r[0] + r[1] < MAINTENANCE_BATCH) {
                break;
            }
        }
        int expired = repeat("move expired jobs", sql.expire);
        int purged = repeat("sweep dead jobs", sql.sweepDead);
        return new QueueMaintenanceReport(rescued, rescuedToDead, expired, purged);
    }

    private int repeat(String what, String statement) {
        int total = 0;
        for (int round = 0; round < MAX_ROUNDS; round++) {
            int n = db.autoCommit(what, c -> {
                try (PreparedStatement ps = c.prepareStatement(statement)) {
                    ps.setInt(1, MAINTENANCE_BATCH);
                    return ps.executeUpdate();
                }
            });
            total += n;
            if (n < MAINTENANCE_BATCH) {
                break;
            }
        }
        return total;
    }

    // ------------------------------------------------------------------ operators

    /** Moves a dead job back to pending; false when absent. */
    public boolean revive(String queue, long id) {
        try {
            return db.autoCommit("revive job " + id, c -> {
                try (PreparedStatement ps = c.prepareStatement(sql.reviveAll)) {
                    ps.setString(1, queue);
                    ps.setArray(2, c.createArrayOf("int8", new Long[] {id}));
                    ps.setString(3, channel);
                    try (ResultSet rs = ps.executeQuery()) {
                        return rs.next();
                    }
                }
            });
        } catch (SluiceException e) {
            if (e.getCause() instanceof SQLException se && SqlErrors.UNIQUE_VIOLATION.equals(se.getSQLState())) {
                throw new SluiceException(ErrorCode.UNIQUE_KEY_TAKEN, "dead job " + id + " of queue '" + queue
                        + "' cannot be revived: a live job holds its unique key", se);
            }
            throw e;
        }
    }

    /**
     * Revives these dead jobs of the queue in one transaction: all of them, or none when any id is not a
     * dead job of the queue ({@link ErrorCode#JOB_NOT_FOUND}, naming them) or a live job holds one's unique
     * key ({@link ErrorCode#UNIQUE_KEY_TAKEN}). Returns how many were revived.
     */
    public int reviveAll(String queue, java.util.Collection<Long> ids) {
        java.util.SortedSet<Long> wanted = new java.util.TreeSet<>(ids);
        try {
            return db.transaction("revive jobs", c -> {
                java.util.Set<Long> back = new java.util.HashSet<>();
                try (PreparedStatement ps = c.prepareStatement(sql.reviveAll)) {
                    ps.setString(1, queue);
                    ps.setArray(2, c.createArrayOf("int8", wanted.toArray()));
                    ps.setString(3, channel);
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            back.add(rs.getLong(1));
                        }
                    }
                }
                if (back.size() != wanted.size()) {
                    java.util.List<Long> missing = wanted.stream().filter(id -> !back.contains(id)).toList();
                    throw new SluiceException(ErrorCode.JOB_NOT_FOUND, "queue '" + queue + "' has no dead job with id"
                            + (missing.size() == 1 ? " " : "s ") + missing + "; nothing was revived");
                }
                return back.size();
            });
        } catch (SluiceException e) {
            if (e.getCause() instanceof SQLException se && SqlErrors.UNIQUE_VIOLATION.equals(se.getSQLState())) {
                throw new SluiceException(ErrorCode.UNIQUE_KEY_TAKEN, "dead jobs of queue '" + queue
                        + "' cannot be revived: a live job holds the unique key of one of them; nothing was revived", se);
            }
            throw e;
        }
    }

    /** Deletes dead jobs of the queue: these ids, or all when {@code ids} is null. */
    public int purgeDead(String queue, List<Long> ids) {
        if (ids != null) {
            return db.autoCommit("purge dead jobs", c -> {
                try (PreparedStatement ps = c.prepareStatement(sql.purgeDeadIds)) {
                    ps.setString(1, queue);
                    ps.setArray(2, c.createArrayOf("int8", ids.toArray()));
                    return ps.executeUpdate();
                }
            });
        }
        int total = 0;
        while (true) {
            // Bounded batches: purging a large dead set never holds one long transaction.
            int n = db.autoCommit("purge dead jobs", c -> {
                try (PreparedStatement ps = c.prepareStatement(sql.purgeDeadBatch)) {
                    ps.setString(1, queue);
                    ps.setInt(2, 10_000);
                    return ps.executeUpdate();
                }
            });
            total += n;
            if (n == 0) {
                return total;
            }
        }
    }

    // ------------------------------------------------------------------ mapping

    private static Instant instant(ResultSet rs, int column) throws SQLException {
        java.time.OffsetDateTime t = rs.getObject(column, java.time.OffsetDateTime.class);
        return t == null ? null : t.toInstant();
    }

    /** A column of {@link QueueSql#micros}: microseconds since the epoch. */
    private static Instant micros(ResultSet rs, int column) throws SQLException {
        long us = rs.getLong(column);
        return rs.wasNull() ? null : Instant.ofEpochSecond(Math.floorDiv(us, 1_000_000L), Math.floorMod(us, 1_000_000L) * 1_000L);
    }

    static Instant instant(Timestamp ts) {
        return ts == null ? null : ts.toInstant();
    }

    @SuppressWarnings("unchecked")
    static Map<String, String> headers(String json) {
        if (json == null) {
            return Map.of();
        }
        try {
            return Collections.unmodifiableMap(JSON.readValue(json, LinkedHashMap.class));
        } catch (java.io.IOException e) {
            return Map.of();
        }
    }

    private static SluiceException map(SQLException e, String what) {
        if (SqlErrors.UNDEFINED_TABLE.equals(e.getSQLState())) {
            return new SluiceException(ErrorCode.SYSTEM_NOT_REGISTERED, what + ": the schema has no job tables", e);
        }
        return SqlErrors.map(e, what);
    }
}
