package dev.sluice.internal.queue;

import dev.sluice.ErrorCode;
import dev.sluice.JobHandler;
import dev.sluice.Serde;
import dev.sluice.SluiceException;
import dev.sluice.WorkOptions;
import dev.sluice.Worker;
import dev.sluice.internal.jdbc.SqlErrors;
import dev.sluice.internal.notify.ClientSession;
import dev.sluice.internal.runtime.BoundedExecutor;
import dev.sluice.internal.runtime.ClientRuntime;
import dev.sluice.internal.runtime.PollLoop;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One running worker of a queue: the claim loop (one claim round trip fetches jobs for every free slot
 * plus the prefetch), the handlers, the completer (acks batched into one statement per batch,
 * {@link JobCompleter}), the heartbeats ({@link Heartbeats}: each claim is extended every third of
 * its stamped visibility timeout, batched into one statement; jobs that finish faster never cost one), the
 * maintenance tick, and the drain on close. No database connection is held while a handler runs. See docs/queues.md.
 *
 * <p>Nothing here owns a thread: the loops are {@link PollLoop}s on the client's shared scheduler and the
 * handlers run on its shared handler pool (or {@link WorkOptions#executor()}), at most {@code concurrency}
 * at once through a {@link BoundedExecutor}; threads do not grow with the number of workers.
 */
public final class QueueWorker<T> implements Worker {
    private static final Logger log = LoggerFactory.getLogger(QueueWorker.class);
    /** The shortest wait of an idle loop: a due job that another claimer holds locked is taken within it. */
    private static final long MIN_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(25);
    /** The wait of a loop with no free slot: a finishing handler or a flushed ack batch wakes it. */
    private static final long FULL_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    /** The wait of the helper while the queue is not busy: the first loop wakes it when it is. */
    private static final long HELPER_IDLE_NANOS = TimeUnit.HOURS.toNanos(1);
    private static final int MAX_CLAIM = 1_000;
    /** Claim loops of a prefetching worker: the first, and helpers that run while the queue is busy. */
    private static final int CLAIMERS = 2;

    private final JobStore store;
    private final String queue;
    private final Serde<T> serde;
    private final JobHandler<T> handler;
    private final WorkOptions o;
    /** The client's session (wake-ups), resolved at {@link #start()}; null without wake-ups. */
    private final java.util.function.Supplier<ClientSession> sessions;
    private volatile ClientSession session;
    private final String workerId;
    private final Runnable onClose;
    /** Claimed jobs held by this worker: waiting for a slot (prefetched) or running. */
    private final Map<Long, RunningJob<T>> inflight = new ConcurrentHashMap<>();
    /** A job claimed again while its earlier claim's handler still runs here: started after it ends. */
    private final Map<Long, JobStore.Claimed> deferred = new ConcurrentHashMap<>();
    private final JobCompleter completer;
    /** Whether the queue's fleet instance may take work (paused by target 0, a standby beyond its target). */
    private final dev.sluice.internal.runtime.WorkGate gate;
    private final int capacity;
    /** The largest result a handler may complete a job with (the queue handle's maxPayloadBytes). */
    private final int maxResultBytes;
    /** The queue's meters (no-ops without a registry): how attempts ended, the handler's time. */
    private final dev.sluice.internal.metrics.JobMeters meters;
    /** The spans attempts run their handler in (no-ops without OpenTelemetry; docs/tracing.md). */
    private final dev.sluice.internal.tracing.ProcessSpans spans;

    /** The claim loop, on the client's shared scheduler. */
    private final PollLoop loop;
    /**
     * A further claimer (prefetching workers only; null otherwise), active only while the queue is busy (the
     * last claim came back full): it keeps a claim round trip in flight while the first one's jobs are handed
     * out, so a busy worker is not bound by one claim's latency. It waits while the queue is idle, so idle
     * costs what one loop costs.
     */
    private final PollLoop helper;
    /** The maintenance tick (null when {@link WorkOptions#maintenanceInterval()} is zero). */
    private final PollLoop maintenance;
    /** Jobs asked for by claims in flight: counted as held, so two claimers never overshoot the capacity. */
    private final AtomicInteger reserved = new AtomicInteger();
    /** Where the claims start their scans (shared by the claim loops). */
    private final ClaimHints hints = new ClaimHints();
    private volatile boolean busy;
    /** The first loop's last claim came back short: a finishing handler does not wake it (only a wake-up does). */
    private volatile boolean idle;
    private final Heartbeats<T> heartbeats;
    /** The handlers: at most {@code concurrency} at once on the client's handler pool or the caller's executor. */
    private final Executor executor;
    private volatile AutoCloseable wakeRegistration;
    private volatile boolean running = true;
    private volatile boolean closed;
    private boolean started;
    private volatile long lastWarn;
    /** The first loop's pause after a failed claim (loop runs only). */
    private long errorBackoffMillis = 100;

    /**
     * A worker that is not started yet ({@link #start()}): nothing runs and no thread starts until then.
     * {@code sessions} is null without wake-ups.
     */
    public QueueWorker(JobStore store, String queue, Serde<T> serde, JobHandler<T> handler, WorkOptions o,
                       int maxResultBytes, java.util.function.Supplier<ClientSession> sessions, String clientId,
                       ClientRuntime runtime, Runnable onClose, dev.sluice.internal.runtime.WorkGate gate,
                       dev.sluice.internal.metrics.JobMeters meters, dev.sluice.internal.tracing.ProcessSpans spans) {
        this.gate = gate;
        this.meters = meters;
        this.spans = spans;
        this.maxResultBytes = maxResultBytes;
        this.store = store;
        this.queue = queue;
        this.serde = serde;
        this.handler = handler;
        this.o = o;
        this.sessions = sessions;
        this.workerId = clientId + "/" + queue + "/" + UUID.randomUUID().toString().substring(0, 8);
        this.onClose = onClose;
        this.capacity = o.concurrency() + o.prefetch();
        // Prefetched jobs wait in the bounded executor's queue, so no more handlers run at once than asked
        // for, on any executor (a caller's may run any number of tasks at once: virtual threads).
        this.executor = new BoundedExecutor(o.executor() == null ? runtime.handlers() : o.executor(), o.concurrency());
        long every = o.maintenanceInterval().toNanos();
        this.maintenance = every == 0 ? null : runtime.loop("queue maintenance " + queue, () -> {
            maintain();
            return every;
        }, SqlErrors::maxPollBackoffMillis);
        this.loop = runtime.loop("worker " + queue, () -> claimPoll(true), SqlErrors::maxPollBackoffMillis);
        this.helper = o.prefetch() > 0 && CLAIMERS > 1
                ? runtime.loop("worker helper " + queue, () -> claimPoll(false), SqlErrors::maxPollBackoffMillis) : null;
        this.heartbeats = new Heartbeats<>(store, queue, inflight, this::warn, runtime.scheduler());
        this.completer = new JobCompleter(store, queue, this::slotsFreed, runtime.scheduler());
    }

    /** Starts the loops (after the client tracks the worker, so a closed client never starts anything); idempotent. */
    public synchronized void start() {
        if (started || closed) {
            return;
        }
        started = true;
        ClientSession s = sessions == null ? null : sessions.get();
        this.session = s;
        if (s != null) {
            wakeRegistration = s.onWake(JobStore.wakeKey(queue), this::wake);
        }
        if (maintenance != null) {
            // A random first delay spreads the ticks of workers started together.
            maintenance.start(ThreadLocalRandom.current().nextLong(o.maintenanceInterval().toNanos() + 1));
        }
        gate.onOpen(this::wake);
        completer.start();
        heartbeats.start();
        loop.start();
        if (helper != null) {
            helper.start(HELPER_IDLE_NANOS);
        }
    }

    @Override
    public String queue() {
        return queue;
    }

    @Override
    public String workerId() {
        return workerId;
    }

    @Override
    public boolean running() {
        return running;
    }

    // ------------------------------------------------------------------ claim loop

    /** A wake-up (a job was enqueued): the first loop claims at once. */
    private void wake() {
        idle = false;
        loop.wake();
    }

    /** How many jobs a claim should ask for now, or 0 when the claimers should wait. */
    private int wanted() {
        // Acks may lag one capacity behind; beyond that they count as held, so a slow database slows the claims.
        int claiming = reserved.get();
        int holding = inflight.size();
        int free = capacity - holding - deferred.size() - claiming - Math.max(0, completer.pending() - capacity);
        // Claim for at least half the capacity, so a busy worker claims in batches instead of one job per
        // finished handler; or for whatever is free when a slot is idle and no claim is on its way.
        if (free <= 0 || (free < (capacity + 1) / 2 && (claiming > 0 || holding >= o.concurrency()))) {
            return 0;
        }
        return Math.min(free, MAX_CLAIM);
    }

    /** A handler finished or acks were written: wake the claimers if they can claim again. */
    private void slotsFreed() {
        if (wanted() > 0) {
            if (!idle) {
                loop.wake();
            }
            if (busy && helper != null) {
                helper.wake();
            }
        }
    }

    /**
     * One run of a claim loop ({@code first}: the worker's loop; otherwise the helper, which claims only while
     * the queue is busy): claims for the free slots and hands the jobs out; returns the wait before the next run.
     */
    private long claimPoll(boolean first) {
        if (!running) {
            return HELPER_IDLE_NANOS;
        }
        if (!gate.open()) {
            // Paused or a standby: claims nothing (running jobs finish); the gate wakes the first loop when it opens.
            return first ? TimeUnit.SECONDS.toNanos(1) : HELPER_IDLE_NANOS;
        }
        if (first) {
            idle = false;
        } else if (!busy) {
            return HELPER_IDLE_NANOS;
        }
        int n = wanted();
        if (n <= 0) {
            return FULL_WAIT_NANOS; // a finishing handler or a flushed ack batch wakes us
        }
        reserved.addAndGet(n);
        List<JobStore.Claimed> got;
        long wait = 0;
        try {
            long start = System.nanoTime();
            got = store.claim(queue, n, workerId, hints.next());
            meters.claimed(System.nanoTime() - start);
            hints.claimed(got, n);
            if (!running) {
                // Closed while claiming: give these back at once, uncounted.
                releaseClaims(got);
                return HELPER_IDLE_NANOS;
            }
            for (JobStore.Claimed c : got) {
                begin(c);
            }
            if (got.size() < n) {
                busy = false;
                if (first) {
                    wait = idleWait();
                    idle = true;
                }
            }
            errorBackoffMillis = 100;
        } catch (RuntimeException e) {
            warn("worker loop error; retrying", e);
            busy = false;
            if (!first) {
                return HELPER_IDLE_NANOS;
            }
            long backoff = errorBackoffMillis;
            errorBackoffMillis = Math.min(SqlErrors.maxPollBackoffMillis(e), errorBackoffMillis * 2);
            return TimeUnit.MILLISECONDS.toNanos(backoff);
        } finally {
            reserved.addAndGet(-n);
        }
        if (got.size() < n) {
            return first ? wait : HELPER_IDLE_NANOS;
        }
        if (first && !busy && helper != null) {
            busy = true;
            helper.wake();
        }
        return 0;
    }

    private void releaseClaims(List<JobStore.Claimed> claims) {
        long[] ids = new long[claims.size()];
        UUID[] tokens = new UUID[claims.size()];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = claims.get(i).id();
            tokens[i] = claims.get(i).token();
        }
        // They are pending again at their old places, likely below where the next claim would start.
        hints.reset();
        try {
            store.releaseAll(ids, tokens);
        } catch (RuntimeException e) {
            warn("could not release claims; they are rescued when they expire", e);
        }
    }

    /** How long an idle loop sleeps: until the next delayed job is due, the idle check, or a wake-up. */
    private long idleWait() {
        Duration idle = session != null && session.healthy() ? o.idleCheck() : o.pollInterval();
        long wait = idle.toNanos();
        JobStore.NextDue next = store.nextDue(queue);
        if (next.at() != null) {
            long until = Duration.between(next.now(), next.at()).toNanos() + TimeUnit.MILLISECONDS.toNanos(1);
            wait = Math.min(wait, Math.max(until, MIN_WAIT_NANOS));
        }
        return wait;
    }

    private void begin(JobStore.Claimed c) {
        if (inflight.containsKey(c.id())) {
            // Our earlier claim of this job expired and we claimed it again while its handler still runs:
            // never run one job twice at once here; the new claim starts when the old handler is done.
            deferred.put(c.id(), c);
            if (inflight.containsKey(c.id()) || deferred.remove(c.id()) == null) {
                return;
            }
        }
        ClaimedJob<T> handle = new ClaimedJob<>(store, c, serde, completer, maxResultBytes, meters);
        long firstBeat = System.nanoTime() + c.visibilityTimeoutNs() / 3;
        RunningJob<T> r = new RunningJob<>(handle, firstBeat);
        inflight.put(c.id(), r);
        heartbeats.scheduled(firstBeat);
        try {
            executor.execute(() -> run(r));
        } catch (RejectedExecutionException e) {
            inflight.remove(c.id());
            handle.release();
            warn("the executor refused a job; released it", e);
        }
    }

    private void run(RunningJob<T> r) {
        ClaimedJob<T> h = r.handle;
        if (!r.taken.compareAndSet(false, true)) {
            return; // the drain took it (and gives it back)
        }
        dev.sluice.internal.tracing.ProcessSpan span = spans.start(h.id(), h.attempt(), h.headers());
        try (dev.sluice.internal.tracing.ProcessSpan.Entered entered = span.enter()) { // current while the handler runs
            try {
                h.payload();
            } catch (SluiceException e) {
                if (e.code() == ErrorCode.PAYLOAD_NOT_DECODABLE) {
                    // Retrying cannot make the bytes decode: dead at once, with the reason.
                    h.terminal("undecodable payload: " + e.problem());
                    return;
                }
                throw e;
            }
            long start = System.nanoTime();
            try {
                handler.handle(h);
            } finally {
                meters.handled(System.nanoTime() - start);
            }
            if (!h.resolved()) {
                // Batched with other completions; the answer arrives on the completer's thread.
                h.ackLater().whenComplete((deleted, error) -> {
                    if (error != null) {
                        warn("could not ack; the job runs again after its claim expires", error);
                        return;
                    }
                    h.acked(deleted);
                    if (!deleted) {
                        lostClaim(h, "ack");
                    }
                });
            }
        } catch (Throwable e) {
            span.thrown(e);
            if (e instanceof Error && !(e instanceof AssertionError) && !(e instanceof StackOverflowError)) {
                log.error("job handler threw an Error: queue={} job={}", queue, h.id(), e);
            }
            if (!h.resolved()) {
                try {
                    if (!h.fail(e)) {
                        lostClaim(h, "fail");
                    }
                } catch (RuntimeException db) {
                    warn("could not record a failed attempt; the job runs again after its claim expires", db);
                }
            }
        } finally {
            span.jobEnded(h.outcome()); // null: unresolved, the batched ack follows
            inflight.remove(h.id());
            JobStore.Claimed again = deferred.remove(h.id());
            if (again != null && running) {
                begin(again);
            } else if (again != null) {
                releaseClaims(List.of(again));
            }
            slotsFreed();
        }
    }

    private void lostClaim(ClaimedJob<T> h, String what) {
        if (!closed) {
            log.warn("{} refused, claim lost (expired or taken over): queue={} job={} attempt={}", what, queue, h.id(), h.attempt());
        }
    }

    // ------------------------------------------------------------------ maintenance and stop

    /**
     * The worker's own tick: only the rescue of expired claims, which a crashed peer's jobs wait for (latency); the
     * expiry of unclaimed jobs and the dead-job retention are the elected manager's (docs/maintenance.md).
     */
    private void maintain() {
        try {
            if (store.rescueExpired()[0] > 0) {
                // Rescued jobs are pending again at their old places, likely below the claim bounds.
                hints.reset();
            }
        } catch (RuntimeException e) {
            warn("queue maintenance failed; retrying at the next tick", e);
        }
    }

    private void warn(String what, Throwable e) {
        long now = System.nanoTime();
        if (now - lastWarn > TimeUnit.SECONDS.toNanos(30)) {
            lastWarn = now;
            log.warn("{}: queue={} error={}", what, queue, e.toString());
        }
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        running = false;
        // Waits for a claim in progress (which gives back what it claimed once it sees the worker stopping).
        loop.close();
        if (helper != null) {
            helper.close();
        }
        if (maintenance != null) {
            maintenance.close();
        }
        // Prefetched jobs no handler has started: back at once, uncounted, in one statement.
        releaseUnstarted();
        long deadline = System.nanoTime() + o.shutdownTimeout().toNanos();
        while (!inflight.isEmpty() && System.nanoTime() < deadline) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
        // Unfinished handlers: their claims go back at once, so another worker need not wait for expiry.
        List<JobStore.Claimed> unfinished = new ArrayList<>();
        for (RunningJob<T> r : new ArrayList<>(inflight.values())) {
            r.taken.set(true);
            if (!r.handle.resolved()) {
                r.handle.markResolved();
                unfinished.add(r.handle.row());
            }
        }
        unfinished.addAll(deferred.values());
        deferred.clear();
        if (!unfinished.isEmpty()) {
            releaseClaims(unfinished);
        }
        // Every ack the finished handlers queued is written before close returns.
        completer.close();
        heartbeats.stop();
        AutoCloseable wake = wakeRegistration;
        if (wake != null) {
            try {
                wake.close();
            } catch (Exception ignored) {
                // a wake registration has nothing to fail on
            }
        }
        onClose.run();
    }

    private void releaseUnstarted() {
        List<JobStore.Claimed> unstarted = new ArrayList<>();
        for (RunningJob<T> r : new ArrayList<>(inflight.values())) {
            if (r.taken.compareAndSet(false, true)) {
                r.handle.markResolved();
                unstarted.add(r.handle.row());
                inflight.remove(r.handle.id());
            }
        }
        if (!unstarted.isEmpty()) {
            releaseClaims(unstarted);
        }
    }

    @Override
    public String toString() {
        return "Worker[" + workerId + "]";
    }
}
