package dev.sluice.bench.lab;

import dev.sluice.EnqueueOptions;
import dev.sluice.JobHandle;
import dev.sluice.Queue;
import dev.sluice.QueueOptions;
import dev.sluice.Sluice;
import dev.sluice.WorkOptions;
import dev.sluice.Worker;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * The queue engine of the lab: producer processes enqueue jobs of several priorities, some delayed, some with unique
 * keys (some deliberately repeated, so the key deduplicates them), some deliberately invalid (rejected), a few awaited
 * ({@link Queue#await}); consumer processes run workers whose handlers fail some first attempts, fail some jobs for good
 * ({@code terminal}) or on every attempt until they are dead, and hang some past the lease; the producer processes
 * redrive ("revive") the jobs that died of failures, which then succeed. Every enqueue, handler call, handler-side ack,
 * revive and completion wait goes to the ledger; {@link QueueChecker} holds it against Sluice's tables.
 *
 * <p>The queue keeps run records ({@code keepRuns}), so an acked job leaves a {@code job_run} row with the handler's
 * result: every job's end is visible to the checker. Every job carries its tag and plan in headers, which the run
 * records, dead jobs and live jobs keep.
 */
final class QueueEngine implements LabEngine {
    static final String NAME = "queue";
    /** The lab queue. */
    static final String QUEUE = "lab-jobs";
    static final String TAG_HEADER = "lab-tag";
    static final String PLAN_HEADER = "lab-plan";
    /** Claims a job may use: an always-failing job is dead after this many. */
    static final int MAX_ATTEMPTS = 4;

    /** What a job's handler does (chosen at enqueue, carried in a header). */
    static final String OK = "ok";
    /** Its first attempt fails (it then succeeds). */
    static final String TRANSIENT = "transient";
    /** Its first attempt hangs for two leases (the worker's heartbeats must keep the claim), then it succeeds. */
    static final String HANG = "hang";
    /** Fails for good at once ({@code terminal}): dead, reason discarded; never revived. */
    static final String TERMINAL = "terminal";
    /** Fails every attempt until revived (dead, reason failed); once revived it succeeds. */
    static final String EXHAUST = "exhaust";

    static final LedgerWriter.Table ENQUEUE = LedgerWriter.table("queue_enqueue", "tag", "producer", "plan", "priority",
            "delay_ms", "unique_key", "wait", "outcome", "job_id", "error", "started_at", "ended_at");
    static final LedgerWriter.Table CALL = LedgerWriter.table("queue_call", "instance", "call_id", "job_id", "tag", "attempt",
            "claim_token", "phase", "outcome", "started_at", "at");
    static final LedgerWriter.Table ACK = LedgerWriter.table("queue_ack", "instance", "call_id", "job_id", "claim_token", "kind",
            "returned", "error", "at");
    static final LedgerWriter.Table REVIVE = LedgerWriter.table("queue_revive", "reviver", "job_id", "tag", "outcome", "error",
            "started_at", "ended_at");
    static final LedgerWriter.Table WAIT = LedgerWriter.table("queue_wait", "waiter", "tag", "job_id", "outcome", "status",
            "result", "error", "started_at", "ended_at");

    private static final AtomicLong CALLS = new AtomicLong();

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String ddl() {
        return """
            CREATE TABLE sluice_lab.queue_enqueue (
                tag         text NOT NULL,
                producer    text NOT NULL,
                plan        text NOT NULL,
                priority    integer NOT NULL,
                delay_ms    bigint NOT NULL,
                unique_key  text,
                wait        boolean NOT NULL,
                -- attempt (written before the call), ok (job_id returned), rejected, unknown
                outcome     text NOT NULL,
                job_id      bigint,
                error       text,
                started_at  timestamptz NOT NULL,
                ended_at    timestamptz
            );
            CREATE TABLE sluice_lab.queue_call (
                instance     text NOT NULL,
                call_id      text NOT NULL,
                job_id       bigint NOT NULL,
                tag          text,
                attempt      integer NOT NULL,
                claim_token  text NOT NULL,
                phase        text NOT NULL,
                outcome      text,
                started_at   timestamptz NOT NULL,
                at           timestamptz NOT NULL
            );
            CREATE TABLE sluice_lab.queue_ack (
                instance     text NOT NULL,
                call_id      text NOT NULL,
                job_id       bigint NOT NULL,
                claim_token  text NOT NULL,
                kind         text NOT NULL,
                returned     boolean,
                error        text,
                at           timestamptz NOT NULL
            );
            CREATE TABLE sluice_lab.queue_revive (
                reviver     text NOT NULL,
                job_id      bigint NOT NULL,
                tag         text,
                -- attempt (written before the redrive), revived, absent (redrive returned false), refused, error
                outcome     text NOT NULL,
                error       text,
                started_at  timestamptz NOT NULL,
                ended_at    timestamptz
            );
            -- the handlers of revived jobs look their job up here
            CREATE INDEX queue_revive_job_idx ON sluice_lab.queue_revive (job_id);
            CREATE TABLE sluice_lab.queue_wait (
                waiter      text NOT NULL,
                tag         text NOT NULL,
                job_id      bigint NOT NULL,
                -- ended (the await returned), timeout (gave up), error
                outcome     text NOT NULL,
                status      text,
                result      text,
                error       text,
                started_at  timestamptz NOT NULL,
                ended_at    timestamptz NOT NULL
            );
            """;
    }

    /** The lab queue's options: the lease as visibility timeout, a short backoff, runs kept for the checker. */
    static QueueOptions options(long leaseMs) {
        return QueueOptions.builder().visibilityTimeout(Duration.ofMillis(Math.max(200, leaseMs))).maxAttempts(MAX_ATTEMPTS)
                .backoffBase(Duration.ofMillis(50)).maxBackoff(Duration.ofMillis(500))
                .deadLetterRetention(Duration.ofDays(1)).keepRuns(Duration.ofDays(1)).build();
    }

    @Override
    public void setUp(Sluice sluice) {
        // A queue needs no registration; the first queue operation installs the control plane (done here once, not
        // raced by the processes).
        sluice.queue(QUEUE, String.class).admin().stats();
    }

    @Override
    public AutoCloseable startProducer(Context ctx) {
        return QueueProducer.start(ctx, ctx.sluice().queue(QUEUE, String.class, options(ctx.leaseMs())));
    }

    @Override
    public AutoCloseable startConsumer(Context ctx) {
        Queue<String> queue = ctx.sluice().queue(QUEUE, String.class, options(ctx.leaseMs()));
        Worker worker = queue.work(job -> handle(ctx, job), WorkOptions.defaults().withConcurrency(8)
                .withPollInterval(Duration.ofMillis(200)).withIdleCheck(Duration.ofSeconds(1))
                .withShutdownTimeout(Duration.ofSeconds(5)).withMaintenanceInterval(Duration.ofSeconds(1)));
        return LabEngine.closedOnStop(worker, "lab-queue-worker-close");
    }

    /**
     * A handler call: a start row (not waited for), the plan's behaviour, an end row written durably before the job is
     * resolved, then the handler's own {@code complete} / {@code terminal} and what it returned (queued, not waited for).
     */
    static void handle(Context ctx, JobHandle<String> job) throws Exception {
        String tag = job.headers().get(TAG_HEADER);
        String plan = job.headers().getOrDefault(PLAN_HEADER, OK);
        String callId = ctx.instance() + "-q" + CALLS.incrementAndGet();
        Instant started = Instant.now();
        LedgerWriter ledger = ctx.ledger();
        // The end row carries the start time: a start row not yet written when the call ends is dropped.
        LedgerWriter.Pending start = ledger.append(CALL, ctx.instance(), callId, job.id(), tag, job.attempt(),
                job.claimToken(), "start", null, started, started);
        if (HANG.equals(plan) && job.attempt() == 1) {
            Thread.sleep(2 * ctx.leaseMs()); // past the lease: the worker's heartbeats must keep the claim
        }
        boolean fail = switch (plan) {
            case TRANSIENT -> job.attempt() == 1;
            case EXHAUST -> !revived(ctx.pool(), job.id());
            default -> false;
        };
        start.cancel();
        if (fail) {
            ledger.write(CALL, ctx.instance(), callId, job.id(), tag, job.attempt(), job.claimToken(), "end", "failed", started,
                    Instant.now());
            throw new IllegalStateException("lab: failure of plan " + plan + " (attempt " + job.attempt() + ")");
        }
        boolean terminal = TERMINAL.equals(plan);
        ledger.write(CALL, ctx.instance(), callId, job.id(), tag, job.attempt(), job.claimToken(), "end",
                terminal ? "terminal" : "success", started, Instant.now());
        Boolean returned = null;
        String error = null;
        try {
            returned = terminal ? job.terminal("lab: permanent failure") : job.complete(result(tag));
        } catch (RuntimeException e) {
            error = LabOptions.clean(String.valueOf(e.getMessage()));
        }
        // Not waited for: the job is resolved already, and a row lost with a killed process only drops one sample of
        // the ack checks (they count the acks written, never miss one that would make them fail).
        ledger.append(ACK, ctx.instance(), callId, job.id(), job.claimToken(), terminal ? "terminal" : "complete", returned,
                error, Instant.now());
    }

    /** The result a succeeding handler completes its job with (the checker and the completion waits compare it). */
    static String result(String tag) {
        return "done:" + tag;
    }

    /** Whether the producers' reviver redrove (or is about to redrive) this job: its ledger row is written first. */
    private static boolean revived(DataSource pool, long jobId) throws SQLException {
        try (Connection c = pool.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT EXISTS (SELECT 1 FROM sluice_lab.queue_revive WHERE job_id = ?)")) {
            ps.setLong(1, jobId);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    /** Drained: the lab queue has no live job left (every job acked or dead; delays and backoffs are seconds). */
    @Override
    public boolean drained(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT count(*) FROM \"" + Ledger.SLUICE_SCHEMA
                + "\".job WHERE queue = '" + QUEUE + "'")) {
            rs.next();
            return rs.getLong(1) == 0;
        }
    }

    @Override
    public Section check(Connection c, boolean drained) throws SQLException {
        return QueueChecker.check(c, drained);
    }

    /** The enqueue options of a job: its tag and plan as headers, the rest as given. */
    static EnqueueOptions enqueueOptions(String tag, String plan, int priority, long delayMs, String uniqueKey) {
        EnqueueOptions.Builder b = EnqueueOptions.builder().priority(priority).header(TAG_HEADER, tag).header(PLAN_HEADER, plan);
        if (delayMs > 0) {
            b.delay(Duration.ofMillis(delayMs));
        }
        if (uniqueKey != null) {
            b.uniqueKey(uniqueKey);
        }
        return b.build();
    }
}
