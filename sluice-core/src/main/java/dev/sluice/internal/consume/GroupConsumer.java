package dev.sluice.internal.consume;

import dev.sluice.ConsumeOptions;
import dev.sluice.Consumption;
import dev.sluice.ConsumptionStats;
import dev.sluice.Handler;
import dev.sluice.Serde;
import dev.sluice.internal.consume.GroupRegistry.GroupRef;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.notify.ClientSession;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Set;
import dev.sluice.internal.jdbc.SqlErrors;
import dev.sluice.internal.runtime.BoundedExecutor;
import dev.sluice.internal.runtime.ClientRuntime;
import dev.sluice.internal.runtime.PollLoop;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;

/**
 * One running consumption of a group (docs/consume.md): the loop that wakes, parks and polls — the probe
 * decision between fresh claims ({@link RangeClaims}), takeovers and exception rows ({@link ExceptionQueue}) —
 * the handler executor the claimed work is dispatched to ({@link RangeRunner}), and the clean stop that drains
 * and gives back what is unfinished. Key leases ({@link KeyLeases}), outcomes ({@link Outcomes}), renewal
 * ({@link LeaseRenewal}) and counters ({@link ConsumerStats}) are parts of their own.
 */
public final class GroupConsumer<T> implements Consumption {
    private static final Logger log = ConsumerContext.log;
    private static final long PROBE_EVERY_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** {@link #leaseEndsAt} when the last probe saw no range lease. */
    private static final long NO_LEASE = Long.MIN_VALUE;
    /** How long a keyed group leaves due rows alone after none of them could run (unless notified). */
    private static final long ROWS_QUIET_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** How often chains waiting for a busy key retry it. */
    private static final long KEY_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /** How long {@link #close()} spends at most giving back unfinished work, after the handlers' shutdown timeout. */
    static final Duration RELEASE_LIMIT = Duration.ofSeconds(10);

    private final ConsumerContext ctx;
    private final ConsumeOptions o;
    /** The presence lock and the wake-ups, through the client's session (resolved at {@link #start()}). */
    private final SessionTies ties;
    private final RangeClaims claims;
    private final Delivery<T> delivery;
    private final ExceptionQueue<T> queue;
    private final KeyLeases keys;
    private final RangeRunner<T> ranges;
    private final LeaseRenewal renewal;
    /** Whether the group's fleet instance may take work (paused by target 0, a standby beyond its target). */
    private final dev.sluice.internal.runtime.WorkGate gate;
    /** How often a shut gate is re-checked besides its own wake-up when it opens. */
    private static final long GATE_CHECK_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** Run when the consumption has closed ({@link #onClose}). */
    private volatile Runnable onClose = () -> { };

    /** The poll loop, the lease renewal and the retry of busy keys: tasks on the client's shared scheduler. */
    private final PollLoop loop;
    private final PollLoop renewLoop;
    /** Retries the keys of chains waiting for a busy key (exclusive and ordered only); null otherwise. */
    private final PollLoop keyRetry;
    private final long renewNanos;
    /** The handlers: at most {@code concurrency} at once on the client's handler pool or the caller's executor. */
    private final Executor executor;
    private final AtomicInteger outstanding = new AtomicInteger();
    private volatile boolean running = true;
    private boolean started;
    /**
     * Claim before probing: set by a stream notification (new messages committed) and by a full claim
     * (more is waiting), so a wake-up costs one round trip. The probe still runs at least every
     * {@link #PROBE_EVERY_NANOS}, so expired ranges and due rows are served during a long backlog.
     */
    private volatile boolean claimFirst;
    /** Set when a row of a keyed group resolved: the next poll claims rows before anything else. */
    private volatile boolean rowsFirst;
    /** When the current run of claims without a probe began (0: the last poll probed). Loop runs only. */
    private long claimStreakStart;
    /**
     * When (System.nanoTime) the earliest range lease the last probe saw runs out; {@link #NO_LEASE} when it saw
     * none. Once it has passed, an expired range may wait: the next poll probes (and takes it over) before it claims
     * fresh messages, so a dead holder's work is not left behind a backlog of newer ones. Loop runs only.
     */
    private long leaseEndsAt = NO_LEASE;
    /** The wait for a pending observation to settle (loop runs only). */
    private final SettleWait settle;
    /** Until when (System.nanoTime) the probe's due rows are not claimed again: none could run. */
    private volatile long rowsQuietUntil = System.nanoTime();
    /**
     * Test hook: a frozen holder (a long GC pause, a network partition) — it neither renews nor
     * claims, while its handlers keep running.
     */
    volatile boolean renewalSuspended;

    /** Builds the consumption; nothing runs until {@link #start()}. */
    public GroupConsumer(Db db, String schema, GroupRef g, Handler<T> handler, ConsumeOptions o, Serde<T> serde,
                         Set<Integer> accept, java.util.function.Supplier<ClientSession> sessions, ClientRuntime runtime,
                         dev.sluice.internal.runtime.WorkGate gate, dev.sluice.internal.metrics.DeliveryMeters meters,
                         dev.sluice.internal.tracing.ProcessSpans spans) {
        this.gate = gate;
        this.ctx = new ConsumerContext(db, g, o, meters, spans);
        this.o = o;
        this.ties = new SessionTies(ctx, schema, sessions);
        this.settle = new SettleWait(o.pollInterval().toMillis());
        String channel = dev.sluice.internal.notify.Channels.forSchema(schema);
        this.delivery = new Delivery<>(ctx, handler, serde, accept);
        Outcomes outcomes = new Outcomes(g.config().retry(), () -> ThreadLocalRandom.current().nextDouble());
        this.keys = KeyLeases.of(ctx, channel);
        this.claims = new RangeClaims(ctx);
        this.queue = new ExceptionQueue<>(ctx, delivery, keys, outcomes);
        String name = g.streamName() + "/" + g.groupName();
        this.keyRetry = keys.keyed() ? runtime.loop("busy keys " + name, this::retryKeys, SqlErrors::maxPollBackoffMillis) : null;
        // How long a chain waits in memory for a busy key before it becomes deferred rows.
        long keyWaitNanos = Math.min(o.leaseTimeout().toNanos() / 3, TimeUnit.SECONDS.toNanos(2));
        this.ranges = new RangeRunner<>(ctx, claims, queue, delivery, keys, outcomes, this::submit, outstanding, this::wake,
                () -> running, keyWaitNanos, () -> keyRetry.wakeWithin(KEY_RETRY_NANOS));
        this.renewal = new LeaseRenewal(ctx, ranges.open, claims, queue, keys, () -> renewalSuspended);
        this.executor = new BoundedExecutor(o.executor() == null ? runtime.handlers() : o.executor(), o.concurrency());
        this.renewNanos = TimeUnit.MILLISECONDS.toNanos(Math.max(100, o.leaseTimeout().toMillis() / 3));
        this.renewLoop = runtime.loop("renewal " + name, () -> {
            renewal.renew();
            return renewNanos;
        }, e -> Math.max(100, renewNanos / 1_000_000));
        this.loop = runtime.loop("consumer " + name, this::poll, SqlErrors::maxPollBackoffMillis);
    }

    /**
     * Starts the consumption (idempotent; call it once the client tracks it): takes the group's presence lock,
     * listens for wake-ups and schedules the loop, the renewal and the busy-key retries.
     */
    public synchronized void start() {
        if (started || !running) {
            return;
        }
        started = true;
        ties.start(this::notified);
        gate.onOpen(this::wake);
        renewLoop.start(renewNanos);
        if (keyRetry != null) {
            keyRetry.start(KEY_RETRY_NANOS);
        }
        loop.start();
    }

    // ------------------------------------------------------------------ the loop

    private void wake() {
        loop.wake();
    }

    /** A stream notification: messages were committed, so the next poll claims at once. */
    private void notified() {
        claimFirst = true;
        rowsQuietUntil = System.nanoTime();
        wake();
    }

    /** One run of the loop: how long to wait before the next (0: at once). */
    private long poll() {
        if (renewalSuspended) {
            return TimeUnit.MILLISECONDS.toNanos(100);
        }
        if (!gate.open()) {
            return GATE_CHECK_NANOS; // paused or a standby: claims nothing; in-flight work finishes and renews
        }
        if (outstanding.get() >= o.concurrency() + o.batchSize()) {
            return TimeUnit.MILLISECONDS.toNanos(500); // full: a finishing handler wakes us
        }
        if (settle.waiting()) {
            Long wait = settle.next(claims::settled);
            if (wait != null) {
                return wait;
            }
            claimFirst = true;
        }
        return pollOnce();
    }


    /** One run of the busy-key retry: retries waiting chains; soon again while some wait, else when woken. */
    private long retryKeys() {
        ranges.retryWaiting();
        return ranges.hasWaiting() ? KEY_RETRY_NANOS : TimeUnit.HOURS.toNanos(1);
    }

    /** One poll; returns how long to wait before the next one (0: poll again at once). */
    private long pollOnce() {
        boolean progressed = false;
        if (claimFirst && !takeoverDue()) {
            claimFirst = false;
            long now = System.nanoTime();
            if (claimStreakStart == 0) {
                claimStreakStart = now;
            }
            if (now - claimStreakStart < PROBE_EVERY_NANOS) {
                RangeClaims.Claimed r = claimFresh();
                if (r.claimed()) {
                    progressed = true;
                } else if (r.pending()) {
                    return settle.begin();
                }
            }
        }
        if (rowsFirst) {
            // A row of ours just resolved: the next row of its key can run now, so claim rows at once
            // rather than at the next probe (per-key progress in row mode would otherwise be one per probe).
            rowsFirst = false;
            progressed |= claimRows() > 0;
        }
        if (progressed) {
            return 0;
        }
        claimFirst = false;
        claimStreakStart = 0;
        RangeClaims.Probe p = claims.probe();
        leaseEndsAt = p.nextLease() == null ? NO_LEASE
                : System.nanoTime() + Duration.between(p.now(), p.nextLease()).toNanos();
        if (due(p.nextLease(), p.now()) && reclaimRange()) {
            return 0;
        }
        boolean rowsDue = due(p.nextDue(), p.now()) || due(p.nextRowExpiry(), p.now());
        if (rowsDue && System.nanoTime() - rowsQuietUntil >= 0) {
            if (claimRows() > 0) {
                return 0;
            }
            if (keys.keyed()) {
                // Due rows, none of which can run now (same-key rows behind an unresolved one): look again
                // after a pause or when notified (a resolved row wakes the next of its key with a NOTIFY).
                rowsQuietUntil = System.nanoTime() + Math.min(ROWS_QUIET_NANOS, o.pollInterval().toNanos());
            }
        }
        if (p.head() > p.claimed() || p.pending()) {
            RangeClaims.Claimed r = claimFresh();
            if (r.claimed()) {
                return 0;
            }
            if (r.pending()) {
                return settle.begin();
            }
        }
        Duration idle = ties.wakeupsHealthy() ? o.idleCheck() : o.pollInterval();
        long wait = idle.toNanos();
        long quietLeft = rowsQuietUntil - System.nanoTime();
        for (Instant next : new Instant[] {p.nextLease(), p.nextDue(), p.nextRowExpiry()}) {
            if (next != null) {
                long until = Math.max(0, Duration.between(p.now(), next).toNanos() + 1_000_000);
                if (next != p.nextLease() && quietLeft > 0) {
                    until = Math.max(until, quietLeft);
                }
                wait = Math.min(wait, until);
            }
        }
        return Math.max(wait, 1_000_000);
    }

    /** Whether the earliest range lease the last probe saw has run out since (an expired range may be waiting). */
    private boolean takeoverDue() {
        return leaseEndsAt != NO_LEASE && System.nanoTime() - leaseEndsAt >= 0;
    }

    private static boolean due(Instant at, Instant now) {
        return at != null && !at.isAfter(now);
    }

    /** The fenced claim of a fresh range with its messages, in one round trip, then its dispatch. */
    private RangeClaims.Claimed claimFresh() {
        long start = System.nanoTime();
        RangeClaims.Claimed r = claims.claim();
        ctx.stats.meters.claimed(System.nanoTime() - start);
        if (!r.claimed()) {
            return r;
        }
        ctx.stats.rangesClaimed.increment();
        if (r.newClaimed() - r.oldClaimed() >= o.batchSize() || r.newClaimed() < r.observed()) {
            claimFirst = true; // more is waiting
        }
        delivery.claimed(r.newClaimed(), r.bindingsJson(), r.headWithBindings());
        ranges.start(new RangeWork(r.leaseId(), r.oldClaimed() + 1, r.newClaimed(), 0, Set.of(), start + o.leaseTimeout().toNanos()),
                r.messages());
        return r;
    }

    /** Takes over the lowest expired range (or quarantines it after too many reclaims); false when none. */
    private boolean reclaimRange() {
        long start = System.nanoTime();
        RangeClaims.Reclaim r = claims.reclaim();
        ctx.stats.meters.claimed(System.nanoTime() - start);
        if (r instanceof RangeClaims.Reclaim.None) {
            return false;
        }
        if (r instanceof RangeClaims.Reclaim.Taken taken) {
            ctx.stats.rangesReclaimed.increment();
            RangeWork w = taken.range();
            log.debug("range taken over: group={} low={} high={} reclaims={}", ctx.g.groupName(), w.low, w.high, w.reclaims);
            ranges.start(w, null);
        }
        return true;
    }

    /** Claims exception rows and runs them; returns how many were claimed. */
    private int claimRows() {
        return queue.claimAndRun(this::submit, outstanding, () -> {
            if (keys.keyed()) {
                rowsFirst = true;
            }
            wake();
        });
    }

    private void submit(Runnable task) {
        executor.execute(() -> {
            try {
                task.run();
            } catch (RuntimeException e) {
                ctx.warn("handler task failed", e);
            }
        });
    }

    // ------------------------------------------------------------------ stats and stop

    @Override
    public ConsumptionStats stats() {
        return ctx.stats.snapshot();
    }

    @Override
    public boolean running() {
        return running;
    }

    /** One release of {@link #close()}'s, in a transaction of its own. */
    private interface Release {
        void run(Connection c) throws SQLException;
    }

    /**
     * Runs a release of {@link #close()} with what is left until {@code deadline} as its statement timeout, so
     * a lock held on a lease row or a stalled server cannot hang close. False when not done (failed, or no
     * time left: the lease then expires by itself).
     */
    private boolean release(long deadline, String what, Release work) {
        long leftMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        if (leftMs <= 0) {
            return false;
        }
        try {
            ctx.db.transaction(what, c -> {
                try (PreparedStatement ps = c.prepareStatement(ConsumeSql.STATEMENT_TIMEOUT)) {
                    ps.setString(1, Long.toString(leftMs));
                    ps.execute();
                }
                work.run(c);
                return null;
            });
            return true;
        } catch (RuntimeException e) {
            ctx.warn("could not " + what + "; it is taken over when its lease expires", e);
            return false;
        }
    }

    @Override
    public synchronized void close() {
        if (!running) {
            return;
        }
        running = false;
        loop.close(); // waits for a poll in progress
        if (keyRetry != null) {
            keyRetry.close();
            ranges.retryWaiting(); // not running any more: every waiting chain becomes deferred rows
        }
        long deadline = System.nanoTime() + o.shutdownTimeout().toNanos();
        while (outstanding.get() > 0 && System.nanoTime() < deadline) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
        // Whatever is still unfinished goes back at once, with what is resolved so far; a database that does
        // not answer stops this after RELEASE_LIMIT (what is left expires with its leases).
        long releaseDeadline = System.nanoTime() + RELEASE_LIMIT.toNanos();
        int left = 0;
        for (RangeWork w : new ArrayList<>(ranges.open.values())) {
            if (w.done) {
                continue;
            }
            w.done = true;
            left += release(releaseDeadline, "release a range", c -> ranges.release(c, w)) ? 0 : 1;
        }
        for (long id : new ArrayList<>(queue.inFlight.keySet())) {
            left += release(releaseDeadline, "release a row", c -> queue.release(c, id)) ? 0 : 1;
        }
        if (keys.keyed()) {
            left += release(releaseDeadline, "release key leases", keys::releaseAll) ? 0 : 1;
        }
        if (left > 0) {
            log.warn("close left {} releases undone; their leases expire by themselves: group={}", left, ctx.g.groupName());
        }
        // Not waited for: a renewal stuck on a locked lease row must not hang close (what it renews is released
        // or expires anyway).
        renewLoop.cancel();
        ties.stop();
        onClose.run();
    }

    /** How long until the loop's next poll (0 while polling); a test sees the consumer in its idle wait. */
    public long idleWaitNanos() {
        return loop.waitingNanos();
    }

    /** Runs {@code r} at the end of the first {@link #close()} (the client lets go of the consumption). */
    public void onClose(Runnable r) {
        this.onClose = java.util.Objects.requireNonNull(r, "r");
    }

    @Override
    public String toString() {
        return "consumption of " + ctx.g.streamName() + "/" + ctx.g.groupName();
    }
}
