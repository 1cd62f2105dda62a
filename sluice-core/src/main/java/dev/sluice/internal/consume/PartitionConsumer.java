package dev.sluice.internal.consume;

import dev.sluice.ConsumeOptions;
import dev.sluice.Consumption;
import dev.sluice.ConsumptionStats;
import dev.sluice.Handler;
import dev.sluice.Serde;
import dev.sluice.internal.consume.GroupRegistry.GroupRef;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.jdbc.SqlErrors;
import dev.sluice.internal.notify.ClientSession;
import dev.sluice.internal.runtime.BoundedExecutor;
import dev.sluice.internal.runtime.ClientRuntime;
import dev.sluice.internal.runtime.PollLoop;
import dev.sluice.internal.runtime.WorkGate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

/**
 * One member of a partitioned group (docs/partitions.md): it owns some of the group's buckets through shard leases
 * ({@link BucketLeases}), claims the messages of its idle buckets in one fenced round trip ({@link PartitionClaims}),
 * runs them per key in order ({@link BucketRunner}), and commits each bucket's position with the batch's outcomes.
 * Retries, delays and dead letters are the exception queue's rows of the {@code ordered} policy, claimed only for
 * the buckets it owns. It takes buckets up to its fair share, gives back those above it once their batch is
 * committed, and gives everything back on a clean close.
 */
public final class PartitionConsumer<T> implements Consumption {
    private static final long PROBE_EVERY_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long ROWS_QUIET_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long GATE_CHECK_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** Positions moved by empty windows are stored at least this often when no batch commit carried them. */
    private static final long FLUSH_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** An owned bucket: its position (everything of it at or below is resolved), what is stored, its open batch. */
    private static final class Bucket {
        final int n;
        volatile long position;
        volatile long stored;
        volatile BucketBatch open;
        volatile boolean shedding;

        Bucket(int n, long position) {
            this.n = n;
            this.position = position;
            this.stored = position;
        }
    }

    private final ConsumerContext ctx;
    private final ConsumeOptions o;
    /** The presence lock and the wake-ups, through the client's session (resolved at {@link #start()}). */
    private final SessionTies ties;
    private final RangeClaims probes;
    private final PartitionClaims claims;
    private final Delivery<T> delivery;
    private final ExceptionQueue<T> queue;
    private final BucketRunner<T> runner;
    private final LeaseRenewal renewal;
    private final WorkGate gate;
    private final BucketLeases leases;
    private final Map<Integer, Bucket> owned = new ConcurrentHashMap<>();
    private final PollLoop loop;
    private final PollLoop renewLoop;
    private final long renewNanos;
    private final long stepEveryNanos;
    private final Executor executor;
    private final AtomicInteger outstanding = new AtomicInteger();
    private volatile boolean running = true;
    private boolean started;
    private volatile boolean claimFirst;
    private volatile boolean rowsFirst;
    private volatile boolean stepWanted = true;
    private long nextStep;
    private long claimStreakStart;
    /** The wait for a pending observation to settle (loop runs only). */
    private final SettleWait settle;
    private long lastFlush = System.nanoTime();
    private volatile long rowsQuietUntil = System.nanoTime();
    private volatile Runnable onClose = () -> { };
    /** Test hook: a frozen member — it neither claims nor renews its rows, while its handlers keep running. */
    volatile boolean renewalSuspended;

    /**
     * Builds the member; nothing runs until {@link #start()}. {@code join} makes the member's shard leases, given the
     * callback that asks this member to take a rebalancing step.
     */
    public PartitionConsumer(Db db, String schema, GroupRef g, Handler<T> handler, ConsumeOptions o, Serde<T> serde,
                             Set<Integer> accept, java.util.function.Supplier<ClientSession> sessions, ClientRuntime runtime,
                             WorkGate gate, Function<Runnable, BucketLeases> join, dev.sluice.internal.metrics.DeliveryMeters meters,
                             dev.sluice.internal.tracing.ProcessSpans spans) {
        this.ctx = new ConsumerContext(db, g, o, meters, spans);
        this.o = o;
        this.gate = gate;
        this.ties = new SessionTies(ctx, schema, sessions);
        this.settle = new SettleWait(o.pollInterval().toMillis());
        String channel = dev.sluice.internal.notify.Channels.forSchema(schema);
        int n = g.config().partitions();
        this.delivery = new Delivery<>(ctx, handler, serde, accept);
        Outcomes outcomes = new Outcomes(g.config().retry(), () -> ThreadLocalRandom.current().nextDouble());
        LocalKeys keys = new LocalKeys(ctx, channel);
        this.leases = join.apply(this::stepSoon);
        this.queue = new ExceptionQueue<>(ctx, delivery, keys, outcomes, n, () -> leases.held().toArray(Integer[]::new));
        this.probes = new RangeClaims(ctx);
        this.claims = new PartitionClaims(ctx, n);
        this.executor = new BoundedExecutor(o.executor() == null ? runtime.handlers() : o.executor(), o.concurrency());
        this.runner = new BucketRunner<>(ctx, delivery, outcomes, queue, keys, claims, leases, this::submit, outstanding,
                this::wake, () -> running, new Positions(), this::wakeForHeld);
        this.renewal = new LeaseRenewal(ctx, Map.of(), probes, queue, KeyLeases.None.INSTANCE, () -> renewalSuspended); // rows only
        this.renewNanos = TimeUnit.MILLISECONDS.toNanos(Math.max(100, o.leaseTimeout().toMillis() / 3));
        this.stepEveryNanos = renewNanos;
        String name = g.streamName() + "/" + g.groupName();
        this.renewLoop = runtime.loop("renewal " + name, () -> {
            renewal.renew();
            return renewNanos;
        }, e -> Math.max(100, renewNanos / 1_000_000));
        this.loop = runtime.loop("partitions " + name, this::poll, SqlErrors::maxPollBackoffMillis);
    }

    /** Starts the member (idempotent): presence, wake-ups, the loop (whose first step takes buckets) and renewal. */
    public synchronized void start() {
        if (started || !running) {
            return;
        }
        started = true;
        ties.start(this::notified);
        gate.onOpen(this::wake);
        renewLoop.start(renewNanos);
        loop.start();
    }

    private void wake() {
        PollLoop l = loop;
        if (l != null) { // the shard heartbeat may call before the constructor has finished
            l.wake();
        }
    }

    private void notified() {
        claimFirst = true;
        rowsQuietUntil = System.nanoTime();
        wake();
    }

    /** A finished batch waits for the others of its claim: commit it within the hold at the latest. */
    private void wakeForHeld() {
        PollLoop l = loop;
        if (l != null) {
            l.wakeWithin(BucketRunner.HOLD_NANOS);
        }
    }

    /** The shard leases ask for a step (a loss, a share to take or to give back). */
    private void stepSoon() {
        stepWanted = true;
        wake();
    }

    // ------------------------------------------------------------------ the loop

    private long poll() {
        if (renewalSuspended) {
            return TimeUnit.MILLISECONDS.toNanos(100);
        }
        if (runner.holding()) {
            runner.commitFinished(); // batches that waited for the others of their claim
        }
        rebalance();
        if (!gate.open()) {
            return GATE_CHECK_NANOS;
        }
        if (outstanding.get() >= o.concurrency() + o.batchSize()) {
            return TimeUnit.MILLISECONDS.toNanos(500);
        }
        if (settle.waiting()) {
            Long wait = settle.next(probes::settled);
            if (wait != null) {
                return wait;
            }
            claimFirst = true;
        }
        long wait = pollOnce();
        if (System.nanoTime() - lastFlush > FLUSH_NANOS) {
            lastFlush = System.nanoTime();
            runner.flush();
        }
        return Math.min(wait, Math.max(1_000_000, nextStep - System.nanoTime()));
    }

    /** Takes a rebalancing step when asked (and now and then anyway), and gives back idle buckets above the share. */
    private void rebalance() {
        long now = System.nanoTime();
        if (!gate.open()) {
            // Paused, or a standby of a capped worker: it takes nothing and gives back what it holds once committed.
            owned.values().forEach(bk -> bk.shedding = true);
        } else if (stepWanted || now - nextStep >= 0) {
            stepWanted = false;
            nextStep = now + stepEveryNanos;
            BucketLeases.Step s = leases.step();
            if (!s.lost().isEmpty()) {
                ConsumerContext.log.debug("buckets lost: group={} buckets={}", ctx.g.groupName(), s.lost());
            }
            for (int b : s.lost()) {
                Bucket bk = owned.remove(b);
                if (bk != null && bk.open != null) {
                    bk.open.lost = true; // its outcome would be refused: stop running it
                }
            }
            if (!s.acquired().isEmpty()) {
                Map<Integer, Long> pos = claims.positions(s.acquired());
                for (int b : s.acquired()) {
                    Long p = pos.get(b);
                    if (p == null) {
                        ConsumerContext.log.warn("bucket {} of group {} has no position; giving it back", b, ctx.g.groupName());
                        leases.release(List.of(b));
                        continue;
                    }
                    owned.put(b, new Bucket(b, p));
                }
                ConsumerContext.log.debug("buckets acquired: group={} positions={}", ctx.g.groupName(), pos);
                claimFirst = true;
                rowsQuietUntil = now;
            }
            for (int b : s.excess()) {
                Bucket bk = owned.get(b);
                if (bk != null) {
                    bk.shedding = true;
                }
            }
        }
        List<Integer> give = new ArrayList<>();
        for (Bucket bk : owned.values()) {
            if (bk.shedding && bk.open == null) {
                give.add(bk.n);
            }
        }
        if (!give.isEmpty()) {
            runner.flush(); // store what empty windows moved, then let go
            leases.release(give);
            give.forEach(owned::remove);
            ConsumerContext.log.debug("buckets given back: group={} buckets={}", ctx.g.groupName(), give);
        }
    }


    /** What {@link #claimIdle} did: claimed any batch, or found the observation pending. */
    private record Claimed(boolean any, boolean pending) {
    }

    private long pollOnce() {
        boolean progressed = false;
        if (claimFirst) {
            claimFirst = false;
            long now = System.nanoTime();
            if (claimStreakStart == 0) {
                claimStreakStart = now;
            }
            if (now - claimStreakStart < PROBE_EVERY_NANOS) {
                Claimed r = claimIdle();
                if (r.any()) {
                    progressed = true;
                } else if (r.pending()) {
                    return settle.begin();
                }
            }
        }
        if (rowsFirst) {
            rowsFirst = false;
            progressed |= claimRows() > 0;
        }
        if (progressed) {
            return 0;
        }
        claimFirst = false;
        claimStreakStart = 0;
        RangeClaims.Probe p = probes.probe();
        boolean rowsDue = due(p.nextDue(), p.now()) || due(p.nextRowExpiry(), p.now());
        if (rowsDue && System.nanoTime() - rowsQuietUntil >= 0) {
            if (claimRows() > 0) {
                return 0;
            }
            rowsQuietUntil = System.nanoTime() + Math.min(ROWS_QUIET_NANOS, o.pollInterval().toNanos());
        }
        long lowest = Long.MAX_VALUE;
        for (Bucket bk : owned.values()) {
            if (bk.open == null && !bk.shedding) {
                lowest = Math.min(lowest, bk.position);
            }
        }
        if (p.head() > lowest || p.pending()) {
            Claimed r = claimIdle();
            if (r.any()) {
                return 0;
            }
            if (r.pending()) {
                return settle.begin();
            }
        }
        Duration idle = ties.wakeupsHealthy() ? o.idleCheck() : o.pollInterval();
        long wait = idle.toNanos();
        long quietLeft = rowsQuietUntil - System.nanoTime();
        for (Instant next : new Instant[] {p.nextDue(), p.nextRowExpiry()}) {
            if (next != null) {
                long until = Math.max(0, Duration.between(p.now(), next).toNanos() + 1_000_000);
                wait = Math.min(wait, Math.max(until, quietLeft));
            }
        }
        return Math.max(wait, 1_000_000);
    }

    private static boolean due(Instant at, Instant now) {
        return at != null && !at.isAfter(now);
    }

    /** Claims for every idle bucket at once and starts a batch for each that got messages. */
    private Claimed claimIdle() {
        Map<Integer, Long> idle = new HashMap<>();
        for (Bucket bk : owned.values()) {
            if (bk.open == null && !bk.shedding && leases.holds(bk.n)) {
                idle.put(bk.n, bk.position);
            }
        }
        if (idle.isEmpty()) {
            return new Claimed(false, false);
        }
        long start = System.nanoTime();
        PartitionClaims.Claim r = claims.claim(idle);
        ctx.stats.meters.claimed(System.nanoTime() - start);
        delivery.claimed(r.settled(), r.bindingsJson(), r.head());
        java.util.concurrent.atomic.AtomicInteger wave = new java.util.concurrent.atomic.AtomicInteger();
        List<BucketBatch> batches = new ArrayList<>();
        for (Map.Entry<Integer, Long> e : idle.entrySet()) {
            Bucket bk = owned.get(e.getKey());
            if (bk == null || bk.open != null || bk.position != e.getValue()) {
                continue;
            }
            long high = Math.max(e.getValue(), r.high());
            List<Fetched> messages = r.byBucket().get(e.getKey());
            if (messages != null && !messages.isEmpty()) {
                BucketBatch b = new BucketBatch(bk.n, e.getValue(), high, messages, r.blocked(), wave,
                        r.runs().getOrDefault(bk.n, PartitionClaims.Runs.NONE));
                bk.open = b;
                batches.add(b);
            } else if (high > bk.position) {
                bk.position = high; // nothing of this bucket in the window: stored with the next commit
            }
        }
        wave.set(batches.size());
        batches.forEach(runner::start);
        boolean any = !batches.isEmpty();
        if (any) {
            ctx.stats.rangesClaimed.increment();
        }
        if (r.more()) {
            claimFirst = true;
        }
        return new Claimed(any, r.pending() && !any);
    }

    private int claimRows() {
        return queue.claimAndRun(this::submit, outstanding, () -> {
            rowsFirst = true;
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

    /** The runner's view of the buckets. */
    private final class Positions implements BucketRunner.Positions {
        @Override
        public void finished(BucketBatch b, boolean committed) {
            Bucket bk = owned.get(b.bucket);
            if (bk != null && bk.open == b) {
                if (committed) {
                    bk.position = Math.max(bk.position, b.high);
                    bk.stored = Math.max(bk.stored, b.high);
                }
                bk.open = null;
            }
            wake();
        }

        @Override
        public Map<Integer, Long> dirty() {
            Map<Integer, Long> out = new HashMap<>();
            for (Bucket bk : owned.values()) {
                long p = bk.position;
                if (bk.open == null && p > bk.stored) {
                    out.put(bk.n, p);
                }
            }
            return out;
        }

        @Override
        public void stored(Map<Integer, Long> positions) {
            positions.forEach((b, p) -> {
                Bucket bk = owned.get(b);
                if (bk != null) {
                    bk.stored = Math.max(bk.stored, p);
                }
            });
        }
    }

    // ------------------------------------------------------------------ stats and stop

    /** The buckets this member owns now (tests, operators). */
    public Set<Integer> buckets() {
        return Set.copyOf(owned.keySet());
    }

    @Override
    public ConsumptionStats stats() {
        return ctx.stats.snapshot();
    }

    @Override
    public boolean running() {
        return running;
    }

    @Override
    public synchronized void close() {
        if (!running) {
            return;
        }
        running = false;
        loop.close();
        long deadline = System.nanoTime() + o.shutdownTimeout().toNanos();
        while (outstanding.get() > 0 && System.nanoTime() < deadline) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
        // Batches whose handlers did not finish: committed as they are (what did not finish becomes ready rows).
        List<BucketBatch> open = new ArrayList<>();
        for (Bucket bk : owned.values()) {
            BucketBatch b = bk.open;
            if (b != null && !b.done && !b.lost) {
                open.add(b);
            }
        }
        if (!open.isEmpty()) {
            runner.commitUnfinished(open);
        }
        long releaseDeadline = System.nanoTime() + GroupConsumer.RELEASE_LIMIT.toNanos();
        for (long id : new ArrayList<>(queue.inFlight.keySet())) {
            if (System.nanoTime() >= releaseDeadline) {
                break;
            }
            try {
                ctx.db.transaction("release a row", c -> {
                    queue.release(c, id);
                    return null;
                });
            } catch (RuntimeException e) {
                ctx.warn("could not release a row; it is taken over when its lease expires", e);
            }
        }
        runner.flush();
        try {
            leases.leave();
        } catch (RuntimeException e) {
            ctx.warn("could not give the buckets back; they are taken over when their leases expire", e);
        }
        owned.clear();
        renewLoop.cancel();
        ties.stop();
        onClose.run();
    }

    /** Runs {@code r} at the end of the first {@link #close()}. */
    public void onClose(Runnable r) {
        this.onClose = java.util.Objects.requireNonNull(r, "r");
    }

    @Override
    public String toString() {
        return "partitioned consumption of " + ctx.g.streamName() + "/" + ctx.g.groupName();
    }
}
