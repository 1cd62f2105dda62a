package dev.sluice.internal.queue;

import dev.sluice.QueueMaintenanceReport;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.notify.Channels;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * The job queue of one schema, as its callers see it: one entry point that hands each operation to the
 * class that runs its statements ({@link QueueSql}, built here once) —
 * {@link JobInserts} (enqueue, unique keys, and through {@link JobDependencies} children), {@link JobClaims} (claim,
 * plain acks, heartbeat, release), {@link JobEnds} (acks with records or results, retry, fail, discard, rescue,
 * expiry, cancel), {@link JobMaintenance} (the sweeps, revive, purge), {@link JobListing} and {@link RunReads}
 * (operator reads) and {@link RunWaits} (completion waits). Holds no state beyond them; one per client.
 * See docs/queues.md.
 */
public final class JobStore {
    private final JobInserts inserts;
    private final JobClaims claims;
    private final JobEnds ends;
    private final JobMaintenance maintenance;
    private final JobListing listing;
    private final RunReads runs;
    private final RunWaits waits;
    private final ClaimWaits claimWaits;

    /** The store of one installation schema without completion waits' wake-ups (they poll). */
    public JobStore(Db db, String schema) {
        this(db, schema, () -> null);
    }

    /**
     * The store of one installation schema (statement texts built here, once); {@code sessions} gives the client's
     * session (wake-ups of completion waits), or null.
     */
    public JobStore(Db db, String schema, java.util.function.Supplier<dev.sluice.internal.notify.ClientSession> sessions) {
        QueueSql sql = new QueueSql(schema);
        String channel = Channels.forSchema(schema);
        JobDependencies dependencies = new JobDependencies(sql, channel);
        this.inserts = new JobInserts(db, sql, channel, dependencies);
        this.claims = new JobClaims(db, sql, channel);
        this.ends = new JobEnds(db, sql, dependencies);
        this.maintenance = new JobMaintenance(db, sql, channel, ends);
        this.listing = new JobListing(db, sql);
        this.runs = new RunReads(db, sql);
        this.waits = new RunWaits(db, sql, runs, sessions);
        this.claimWaits = new ClaimWaits(claims, sessions);
    }

    /** The reads of runs: one run, pages of records, event trails. */
    public RunReads runs() {
        return runs;
    }

    /** Waits until the job ended; see {@link RunWaits#await}. */
    public dev.sluice.JobRun await(String queue, long id, Duration timeout) {
        return waits.await(queue, id, timeout);
    }

    /** Jobs someone in this process awaits right now. */
    public int awaitedJobs() {
        return waits.waitingJobs();
    }

    /** An operator's cancel of one job of the queue; see {@link JobEnds#cancel}. */
    public dev.sluice.Cancellation cancel(String queue, long id) {
        return ends.cancel(queue, id, "cancelled by an operator", jobId -> runs.ended(queue, jobId));
    }

    /** The operator reads of the same schema: one job, pages of jobs and dead jobs, counts. */
    public JobListing listing() {
        return listing;
    }

    /** The notification payload that wakes the workers of {@code queue}. */
    public static String wakeKey(String queue) {
        return QueueSql.WAKE_PREFIX + queue;
    }

    // ------------------------------------------------------------------ enqueue (JobInserts)

    /**
     * Enqueues in a transaction of our own (replayed on transient conflicts). Jobs without unique keys
     * take the bulk path: one auto-commit statement, which is atomic by itself. Sends no wake-up: the caller
     * sends it after the commit ({@code Engine.enqueued}).
     */
    public List<Long> enqueue(String queue, List<EncodedJob> jobs) {
        return inserts.enqueue(queue, jobs);
    }

    /**
     * Enqueues on the caller's connection and transaction; never commits. {@code wake}: the transaction sends the
     * queue's wake-up itself (false when the caller sends it after the commit).
     */
    public List<Long> enqueueOn(Connection c, String queue, List<EncodedJob> jobs, boolean wake) {
        return inserts.enqueueOn(c, queue, jobs, wake);
    }

    // ------------------------------------------------------------------ claims (JobClaims)

    /** A claimed row, as the claim statement returns it. */
    public record Claimed(long id, String queue, byte[] payload, String contentType, Map<String, String> headers,
                          int priority, Instant runAt, int attempt, int maxAttempts, long visibilityTimeoutNs, UUID token,
                          Instant claimExpiresAt, String uniqueKey, Instant createdAt, boolean keepsRuns) {
    }

    /** A renewed claim: its new expiry, and whether a cancel was requested. */
    public record Beat(Instant until, boolean cancelRequested) {
    }

    /** When the next pending job of the queue is due (by the database clock), and the database's now. */
    public record NextDue(Instant at, Instant now) {
    }

    /**
     * What a settle did: back to pending, moved to the dead jobs, or ended cancelled (its cancel was requested);
     * none of them when the claim was not valid.
     */
    public enum Settled { PENDING, DEAD, CANCELLED, REFUSED }

    /** Claims up to {@code n} due jobs in claim order (one autocommit statement), scanning every due job. */
    public List<Claimed> claim(String queue, int n, String workerId) {
        return claims.claim(queue, n, workerId, ClaimHints.Bounds.NONE);
    }

    /** Claims up to {@code n} due jobs in claim order among those at or above the bounds ({@link ClaimHints}). */
    List<Claimed> claim(String queue, int n, String workerId, ClaimHints.Bounds bounds) {
        return claims.claim(queue, n, workerId, bounds);
    }

    /**
     * Claims up to {@code n} due jobs like {@link #claim(String, int, String)}, waiting up to {@code wait} (0 to
     * {@link #MAX_CLAIM_WAIT}, checked by the caller) for one while none is due; see {@link ClaimWaits}.
     */
    public List<Claimed> claim(String queue, int n, String workerId, Duration wait) {
        return claimWaits.claim(queue, n, workerId, wait);
    }

    /** The longest wait of {@link #claim(String, int, String, Duration)}. */
    public static final Duration MAX_CLAIM_WAIT = ClaimWaits.MAX_WAIT;

    /** Queues someone in this process waits to claim from right now. */
    public int claimWaiters() {
        return claimWaits.waitingQueues();
    }

    /** The earliest {@code run_at} of the queue's claimable pending jobs (null when none). */
    public NextDue nextDue(String queue) {
        return claims.nextDue(queue);
    }

    /**
     * Deletes the rows among {@code ids}/{@code tokens} (pairwise) whose claim is still valid and whose end needs
     * nothing else (no record, waiter, cancel request or children), in one statement; returns the ids it deleted.
     * The others change nothing: finish them with {@link #finish} (which also tells lost claims).
     */
    public Set<Long> ackAll(long[] ids, UUID[] tokens) {
        return claims.ackAll(ids, tokens);
    }

    /**
     * Ends these claims (distinct ids) as succeeded with their results — cancelled when a cancel was requested —
     * writing records, events and children's releases. Returns, by id, whether each ended cancelled; the others
     * were lost.
     */
    Map<Long, Boolean> finish(List<JobEnds.Finish> batch) {
        return ends.finish(batch);
    }

    /** Ends one claim as succeeded with this result (null for none); see {@link #finish}. Null when the claim was lost. */
    public Boolean finishOne(long id, UUID token, byte[] result, String resultContentType) {
        return ends.finish(List.of(new JobEnds.Finish(id, token, result, resultContentType))).get(id);
    }

    /** Gives back the claims still valid among {@code ids}/{@code tokens} unfinished (see {@link #release}); returns how many. */
    public int releaseAll(long[] ids, UUID[] tokens) {
        return claims.releaseAll(ids, tokens);
    }

    /** Extends the claims still valid among {@code ids}/{@code tokens}; returns their new expiry and cancel flag by id. */
    public Map<Long, Beat> heartbeat(long[] ids, UUID[] tokens) {
        return claims.heartbeat(ids, tokens);
    }

    /**
     * Resolves a claim other than by ack: back to pending after {@code delay} (or after the backoff when
     * {@code delay} is null), or dead when it was the last attempt or {@code discard} is set.
     */
    public Settled settle(long id, UUID token, Duration delay, String error, boolean discard) {
        return ends.settle(id, token, delay, error, discard);
    }

    /** Gives a claim back unfinished: pending again at its old place, the attempt not counted. */
    public boolean release(long id, UUID token) {
        return claims.release(id, token);
    }

    // ------------------------------------------------------------------ maintenance and operators (JobMaintenance)

    /** One maintenance tick over every queue of the schema; see {@code Queue.maintain()}. */
    public QueueMaintenanceReport maintain() {
        return maintenance.maintain();
    }

    /** Rescues expired claims of every queue; returns {rescued, rescued to dead}. */
    public long[] rescueExpired() {
        return maintenance.rescue();
    }

    /** Moves unclaimed jobs past their expiry to the dead jobs; returns how many. */
    public int expireUnclaimed() {
        return maintenance.expire();
    }

    /** Deletes dead jobs past their retention; returns how many. */
    public int sweepDeadJobs() {
        return maintenance.sweepDead();
    }

    /** Deletes run records past their retention; returns how many. */
    public int sweepRuns() {
        return maintenance.sweepRuns();
    }

    /** Deletes events past their retention; returns how many. */
    public int sweepEvents() {
        return maintenance.sweepEvents();
    }

    /** Moves a dead job back to pending; false when absent. */
    public boolean revive(String queue, long id) {
        return maintenance.revive(queue, id);
    }

    /**
     * Revives these dead jobs of the queue in one transaction: all of them, or none (see
     * {@link JobMaintenance#reviveAll}). Returns how many were revived.
     */
    public int reviveAll(String queue, Collection<Long> ids) {
        return maintenance.reviveAll(queue, ids);
    }

    /** Redrives every dead job of the queue in bounded batches (see {@link JobMaintenance#redriveAll}). */
    public int redriveAll(String queue) {
        return maintenance.redriveAll(queue);
    }

    /** Deletes dead jobs of the queue: these ids (all or none), or all when {@code ids} is null. */
    public int purgeDead(String queue, List<Long> ids) {
        return maintenance.purgeDead(queue, ids);
    }

    // ------------------------------------------------------------------ values

    /** An instant as microseconds since the epoch ({@link JobValues#micros(Instant)}). */
    static long micros(Instant t) {
        return JobValues.micros(t);
    }
}
