package dev.sluice;

import dev.sluice.internal.catalog.Names;
import dev.sluice.internal.queue.ClaimedJob;
import dev.sluice.internal.queue.EncodedJob;
import dev.sluice.internal.queue.JobEncoder;
import dev.sluice.internal.queue.JobStore;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A handle on a job queue ({@code sluice.queue(name, type)}). Queues are rows, not tables: a queue
 * exists as long as it has jobs and needs no registration: its tables live in the control plane, which
 * the first operation of a client installs when it is missing, as stream registration does (with
 * {@code migrate(false)} it must be installed already, see {@link SluiceSystem#register()}). Creating a
 * handle does no I/O and cannot fail; the name is checked by the operations, before any round trip.
 *
 * <p>With an {@link AmbientTransaction} on the client (the Spring Boot starter sets one), {@link #enqueue} and
 * {@link #enqueueBatch} called inside the caller's open transaction join it, as {@link #enqueueInTransaction} does.
 *
 * <p>The handle's {@link QueueOptions} are stamped on every job it enqueues; claims, failures and the
 * rescuer read them from the job's row.
 *
 * <pre>{@code
 * Queue<Email> emails = sluice.queue("emails", Email.class);
 * long id = emails.enqueue(new Email("ada@example.com", "Welcome"));
 * try (Worker w = emails.work(job -> send(job.payload()), WorkOptions.defaults())) {
 *     ...
 * }
 * }</pre>
 *
 * @param <T> the payload type ({@code byte[]} for the untyped form)
 */
public final class Queue<T> {
    private static final int MAX_BATCH = 10_000;
    private static final int MAX_CLAIM = 1_000;

    private final Sluice sluice;
    private final String name;
    private final Class<T> payloadType;
    private final QueueOptions options;
    private final Serde<T> serde;
    private final JobEncoder<T> encoder;

    Queue(Sluice sluice, String name, Class<T> payloadType, QueueOptions options) {
        this.sluice = sluice;
        this.name = name;
        this.payloadType = payloadType;
        this.options = options;
        this.serde = Serde.forType(payloadType);
        this.encoder = new JobEncoder<>(serde, options, sluice.engine().settings().tracing()); // trace headers: docs/tracing.md
    }

    /** The queue's name as given to the handle. */
    public String name() {
        return name;
    }

    /** The payload type of this handle. */
    public Class<T> payloadType() {
        return payloadType;
    }

    /** The options this handle stamps on the jobs it enqueues. */
    public QueueOptions options() {
        return options;
    }

    /** A handle on the same queue that stamps other options on the jobs it enqueues (no I/O). */
    public Queue<T> withOptions(QueueOptions options) {
        return new Queue<>(sluice, name, payloadType, Objects.requireNonNull(options, "options"));
    }

    /** The job store, after checking the name (also for {@link QueueAdmin}). */
    JobStore store() {
        Names.validate("queue", name);
        sluice.engine().requireControlPlane();
        return sluice.engine().jobStore();
    }

    /** Enqueues one job without options; see {@link #enqueue(Object, EnqueueOptions)}. */
    public long enqueue(T payload) {
        return enqueue(payload, EnqueueOptions.NONE);
    }

    /**
     * Enqueues one job in a transaction of its own and wakes idle workers of the queue.
     *
     * @return the job's id; for a {@code uniqueKey} that a live job of the queue already holds, that job's
     *         id (nothing is written)
     * @throws SluiceException before any round trip: {@link ErrorCode#INVALID_NAME},
     *                         {@link ErrorCode#NULL_PAYLOAD}, {@link ErrorCode#PAYLOAD_NOT_SERIALIZABLE},
     *                         {@link ErrorCode#PAYLOAD_TOO_LARGE}, {@link ErrorCode#INVALID_QUEUE_OPTIONS},
     *                         {@link ErrorCode#INVALID_KEY}, {@link ErrorCode#INVALID_HEADERS}
     */
    public long enqueue(T payload, EnqueueOptions options) {
        EncodedJob job = encoder.encode(payload, options);
        AmbientTransaction.Joined tx = sluice.engine().settings().ambient().current();
        if (tx != null) {
            return joined(tx, List.of(job)).get(0);
        }
        long id = store().enqueue(name, List.of(job)).get(0);
        sluice.engine().enqueued(name);
        return id;
    }

    /**
     * Enqueues all jobs in one transaction: all are written or none. Ids are in input order; repeated or
     * live unique keys resolve to one id. Every job is checked before the round trip.
     */
    public List<Long> enqueueBatch(List<NewJob<T>> jobs) {
        Objects.requireNonNull(jobs, "jobs");
        if (jobs.size() > MAX_BATCH) {
            throw new SluiceException(ErrorCode.INVALID_QUEUE_OPTIONS, "a batch holds at most " + MAX_BATCH + " jobs (got "
                    + jobs.size() + ")");
        }
        List<EncodedJob> encoded = new ArrayList<>(jobs.size());
        for (NewJob<T> j : jobs) {
            Objects.requireNonNull(j, "jobs must not contain null");
            encoded.add(encoder.encode(j.payload(), j.options()));
        }
        if (encoded.isEmpty()) {
            Names.validate("queue", name);
            return List.of();
        }
        AmbientTransaction.Joined tx = sluice.engine().settings().ambient().current();
        if (tx != null) {
            return joined(tx, encoded);
        }
        List<Long> ids = store().enqueue(name, encoded);
        sluice.engine().enqueued(name);
        return ids;
    }

    /** Enqueues in the ambient transaction; after its commit the queue's workers are woken, here and elsewhere. */
    private List<Long> joined(AmbientTransaction.Joined tx, List<EncodedJob> jobs) {
        List<Long> ids = inTransaction(tx.connection(), jobs, false);
        tx.afterCommit(() -> sluice.engine().enqueued(name));
        return ids;
    }

    /** {@code wake}: whether the transaction itself sends the wake-up (no after-commit action of ours runs). */
    private List<Long> inTransaction(Connection connection, List<EncodedJob> jobs, boolean wake) {
        try {
            if (connection.getAutoCommit()) {
                throw new SluiceException(ErrorCode.INVALID_QUEUE_OPTIONS,
                        "enqueueing in the caller's transaction needs a connection in a transaction (auto-commit off)");
            }
        } catch (SQLException e) {
            throw dev.sluice.internal.jdbc.SqlErrors.map(e, "enqueue to queue '" + name + "'");
        }
        return store().enqueueOn(connection, name, jobs, wake);
    }

    /**
     * Enqueues inside the caller's open transaction (auto-commit off): the job exists, and idle workers are
     * woken, if and only if the caller commits. Never commits, never retries. A unique key held by a job
     * the caller's transaction cannot see yet makes the insert wait for that transaction to end.
     *
     * @throws SluiceException {@link ErrorCode#INVALID_QUEUE_OPTIONS} for an auto-commit connection (nothing
     *                         written), and the checks of {@link #enqueue(Object, EnqueueOptions)}
     */
    public long enqueueInTransaction(Connection connection, T payload, EnqueueOptions options) {
        Objects.requireNonNull(connection, "connection");
        return inTransaction(connection, List.of(encoder.encode(payload, options)), true).get(0);
    }

    /**
     * Claims up to {@code n} jobs that are due now, in the order {@code priority DESC, run_at, id}, skipping
     * jobs other workers are claiming ({@code FOR UPDATE SKIP LOCKED}). Each becomes processing until now +
     * its visibility timeout under a fresh claim token, with its attempt counted. The claim is its own short
     * transaction — never part of a business transaction. Resolve each handle (ack, retry, fail, terminal)
     * and {@link JobHandle#heartbeat()} it while working longer than the visibility timeout.
     *
     * @param n at most this many jobs (1 to 1000)
     * @return the claimed jobs in claim order (fewer than {@code n}, or none, when fewer are due)
     */
    public List<JobHandle<T>> claim(int n) {
        checkClaimSize(n);
        JobStore store = store();
        List<JobHandle<T>> out = new ArrayList<>();
        for (JobStore.Claimed c : store.claim(name, n, sluice.clientId())) {
            out.add(new ClaimedJob<>(store, c, serde, options.maxPayloadBytes()));
        }
        return out;
    }

    /**
     * Like {@link #claim(int)}, but when nothing is due it waits up to {@code wait} for jobs: woken by the queue's
     * enqueue wake-ups (LISTEN/NOTIFY on the client's session connection, the same the workers use), when a delayed
     * job comes due, and by a fallback poll (5 s; 1 s while the session is down). It returns as soon as at least one
     * job was claimed, or empty at the deadline (or when the calling thread is interrupted, its flag set again). The
     * wait runs on the calling thread — no thread is started, nothing spins — and any number of threads may wait at
     * once: the waiters of a queue share one wake-up registration, and one wake-up lets one of them claim (a claim
     * that came back full lets the next one claim too).
     *
     * @param n    at most this many jobs (1 to 1000)
     * @param wait how long to wait for a due job (0 to 60 s; 0 is {@link #claim(int)})
     * @throws SluiceException {@link ErrorCode#INVALID_QUEUE_OPTIONS} for {@code n} or {@code wait} out of range
     */
    public List<JobHandle<T>> claim(int n, java.time.Duration wait) {
        checkClaimSize(n);
        if (wait == null || wait.isNegative() || wait.compareTo(JobStore.MAX_CLAIM_WAIT) > 0) {
            throw new SluiceException(ErrorCode.INVALID_QUEUE_OPTIONS, "a claim waits 0 to " + JobStore.MAX_CLAIM_WAIT.toSeconds()
                    + " s (got " + wait + ")");
        }
        JobStore store = store();
        List<JobHandle<T>> out = new ArrayList<>();
        for (JobStore.Claimed c : store.claim(name, n, sluice.clientId(), wait)) {
            out.add(new ClaimedJob<>(store, c, serde, options.maxPayloadBytes()));
        }
        return out;
    }

    /**
     * The claim of job {@code jobId} under {@code claimToken} ({@link JobHandle#claimToken()}), to resolve or heartbeat
     * it from elsewhere — a stateless HTTP worker that reports back later; see {@link JobClaim}. No statement runs here
     * beyond the client's first check of the control plane; the claim's validity is checked by each operation, which
     * returns false (or empty) when the claim is not held. Results are limited by this handle's maxPayloadBytes.
     *
     * @throws SluiceException {@link ErrorCode#INVALID_ARGUMENT} for a job id below 1 or a token that is not a UUID in
     *                         its canonical form (the token is not repeated in the message),
     *                         {@link ErrorCode#INVALID_NAME} for a bad queue name
     */
    public JobClaim claimed(long jobId, String claimToken) {
        if (jobId < 1) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "a job id is at least 1 (got " + jobId + ")");
        }
        java.util.UUID token = JobClaim.parseToken(claimToken);
        return new JobClaim(store(), jobId, token, options.maxPayloadBytes());
    }

    private static void checkClaimSize(int n) {
        if (n < 1 || n > MAX_CLAIM) {
            throw new SluiceException(ErrorCode.INVALID_QUEUE_OPTIONS, "claim takes 1 to " + MAX_CLAIM + " jobs (got " + n + ")");
        }
    }

    /** Starts a worker with the default options; see {@link #work(JobHandler, WorkOptions)}. */
    public Worker work(JobHandler<T> handler) {
        return work(handler, WorkOptions.defaults());
    }

    /**
     * Starts a worker (non-blocking): it claims as many jobs as it has free slots, runs the handler on
     * them, heartbeats each claim every third of its visibility timeout, acks on return and fails on an
     * exception. It sleeps while the queue is idle and wakes on enqueue (LISTEN/NOTIFY on the client's
     * session connection), when the next delayed job is due, or at the fallback poll. It also runs the
     * maintenance tick ({@link #maintain()}) every {@link WorkOptions#maintenanceInterval()}. Close it (or
     * the client) to drain.
     */
    public Worker work(JobHandler<T> handler, WorkOptions options) {
        Objects.requireNonNull(handler, "handler");
        Objects.requireNonNull(options, "options");
        Names.validate("queue", name);
        return sluice.engine().work(name, serde, handler, options, this.options.maxPayloadBytes());
    }

    // ------------------------------------------------------------------ runs (docs/runs.md)

    /**
     * Waits until job {@code id} ends — succeeded, discarded, dead or cancelled — and returns its run, with its result.
     * Woken by a notification when it ends (waiters of one job in a process share one), with a fallback poll. A job
     * whose queue keeps runs can be awaited at any time, also after it ended and after a restart of the waiter; a job
     * without keepRuns can be awaited while it is live (its end then keeps a record for a short grace, 5 minutes).
     *
     * @param timeout how long to wait (0 to 1 day; 0 only reads)
     * @throws SluiceException {@link ErrorCode#AWAIT_TIMEOUT} when it is still live at the timeout (nothing changed),
     *                         {@link ErrorCode#JOB_NOT_FOUND} when the queue has no trace of it,
     *                         {@link ErrorCode#INVALID_ARGUMENT} for a timeout out of range
     */
    public JobRun await(long id, java.time.Duration timeout) {
        return store().await(name, id, timeout);
    }

    /**
     * Cancels job {@code id}: a pending or waiting job ends cancelled at once (its children follow their
     * {@link ParentFailure} policy); a running one is flagged — its worker learns it at the next heartbeat or ack
     * ({@link JobHandle#cancelled()}) and the job ends cancelled then.
     *
     * @throws SluiceException {@link ErrorCode#JOB_NOT_FOUND} when the queue has no trace of the job
     */
    public Cancellation cancel(long id) {
        return store().cancel(name, id);
    }

    /** The run of job {@code id}: its record, its dead job, or the live job; empty when the queue has no trace of it. */
    public Optional<JobRun> run(long id) {
        return store().runs().run(name, id);
    }

    /** A page of the queue's run records, newest first ({@link RunQuery}). */
    public Page<JobRun> runs(RunQuery query) {
        Objects.requireNonNull(query, "query");
        return store().runs().runs(name, query);
    }

    /** The event trail of job {@code id} in sequence order (empty when its queue keeps no runs, or it was swept). */
    public List<RunEvent> events(long id) {
        return store().runs().events(name, id);
    }

    /** The operator actions of this queue: maintenance, inspection and dead letters (no I/O). */
    public QueueAdmin admin() {
        return new QueueAdmin(this);
    }

    /** @deprecated use {@code admin().maintain()} */
    @Deprecated
    public QueueMaintenanceReport maintain() {
        return admin().maintain();
    }

    /** @deprecated use {@code admin().job(id)} */
    @Deprecated
    public Optional<JobInfo> job(long id) {
        return admin().job(id);
    }

    /** @deprecated use {@code admin().jobs(state, cursor, limit)} */
    @Deprecated
    public Page<JobInfo> jobs(JobState state, String cursor, int limit) {
        return admin().jobs(state, cursor, limit);
    }

    /** @deprecated use {@code admin().deadLetters(cursor, limit)} */
    @Deprecated
    public Page<DeadJob> dead(String cursor, int limit) {
        return admin().deadLetters(cursor, limit);
    }

    /** @deprecated use {@code admin().redrive(jobId)} */
    @Deprecated
    public boolean revive(long jobId) {
        return admin().redrive(jobId);
    }

    /** @deprecated use {@code admin().redrive(jobIds)} */
    @Deprecated
    public int revive(List<Long> jobIds) {
        return admin().redrive(jobIds);
    }

    /** @deprecated use {@code admin().purgeAll()} */
    @Deprecated
    public int purgeDead() {
        return admin().purgeAll();
    }

    /**
     * @deprecated use {@code admin().purge(jobIds)}; unlike before, an id that is not a dead job of the queue now
     *             rejects the whole list ({@link ErrorCode#JOB_NOT_FOUND}, nothing deleted)
     */
    @Deprecated
    public int purgeDead(List<Long> jobIds) {
        return admin().purge(jobIds);
    }

    /** @deprecated use {@code admin().stats()} */
    @Deprecated
    public QueueStats stats() {
        return admin().stats();
    }

    @Override
    public String toString() {
        return "Queue[" + name + "]";
    }
}
