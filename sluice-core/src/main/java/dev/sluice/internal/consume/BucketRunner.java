package dev.sluice.internal.consume;

import dev.sluice.internal.consume.RangeWork.LogEvent;
import dev.sluice.internal.consume.RangeWork.OutcomeRow;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * Runs a partitioned member's bucket batches (docs/partitions.md): skips and scheduled messages, one chain per key
 * (its messages one after another in id order; an unresolved one defers the rest, a dead one releases them),
 * keyless messages on their own, all at most {@code concurrency} at once; then the commit of finished batches —
 * outcome rows, events and the buckets' new positions in one transaction under the shard leases' guard, several
 * batches together when they finish together (a group commit on the finishing thread, no thread of its own).
 */
final class BucketRunner<T> {
    /** What the runner needs of the member's state. */
    interface Positions {
        /** A batch's bucket moved to {@code position} (committed), or its batch was refused ({@code committed} false). */
        void finished(BucketBatch b, boolean committed);

        /** Idle buckets whose in-memory position is ahead of the stored one (bucket → position), to carry along. */
        Map<Integer, Long> dirty();

        /** The positions carried along were stored. */
        void stored(Map<Integer, Long> positions);
    }

    private final ConsumerContext ctx;
    private final Delivery<T> delivery;
    private final Outcomes outcomes;
    private final ExceptionQueue<T> queue;
    private final LocalKeys keys;
    private final PartitionClaims claims;
    private final BucketLeases leases;
    private final Consumer<Runnable> submit;
    private final AtomicInteger outstanding;
    private final Runnable wake;
    private final BooleanSupplier running;
    private final Positions positions;
    /** How long a finished batch waits for the others claimed with it, so that they commit in one transaction. */
    static final long HOLD_NANOS = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(20);
    private final Queue<BucketBatch> finished = new ConcurrentLinkedQueue<>();
    /** Asks the member's loop to run {@link #commitFinished} within {@link #HOLD_NANOS}. */
    private final Runnable holdWake;
    private final AtomicBoolean committing = new AtomicBoolean();

    BucketRunner(ConsumerContext ctx, Delivery<T> delivery, Outcomes outcomes, ExceptionQueue<T> queue, LocalKeys keys,
                 PartitionClaims claims, BucketLeases leases, Consumer<Runnable> submit, AtomicInteger outstanding, Runnable wake,
                 BooleanSupplier running, Positions positions, Runnable holdWake) {
        this.holdWake = holdWake;
        this.ctx = ctx;
        this.delivery = delivery;
        this.outcomes = outcomes;
        this.queue = queue;
        this.keys = keys;
        this.claims = claims;
        this.leases = leases;
        this.submit = submit;
        this.outstanding = outstanding;
        this.wake = wake;
        this.running = running;
        this.positions = positions;
    }

    /** Hands a claimed batch out: chains per key, keyless messages alone. */
    void start(BucketBatch b) {
        Bindings bindings = delivery.bindings(b.high);
        Instant now = Instant.now();
        Map<String, List<Fetched>> chains = new LinkedHashMap<>();
        Set<String> blockedKeys = new HashSet<>();
        List<Fetched> keyless = new ArrayList<>();
        for (Fetched f : b.messages) {
            if (delivery.skip(f, bindings)) {
                b.resolved.add(f.id());
                continue;
            }
            String key = f.messageKey();
            if (key != null && (blockedKeys.contains(key) || b.blocked.contains(f.id()))) {
                blockedKeys.add(key); // behind an unresolved message of its key: deferred, in order
                defer(b, f, b.runs.attempt(f.id()));
                continue;
            }
            if (b.runs.exhausted(f.id(), ctx.g.config().maxRangeReclaims())) {
                quarantine(b, f);
                if (key != null) {
                    blockedKeys.add(key); // the later messages of its key wait for the row, in order
                }
                continue;
            }
            Instant deliverAt = Delivery.deliverAt(f);
            if (deliverAt != null && deliverAt.isAfter(now)) {
                b.addRow(new OutcomeRow(f.id(), RowStatus.READY, key, 0, 0, Duration.between(now, deliverAt).toMillis() / 1000.0,
                        null, null));
                if (key != null) {
                    blockedKeys.add(key); // ordered: a scheduled message goes before the later ones of its key
                }
                continue;
            }
            if (key == null) {
                keyless.add(f);
            } else {
                chains.computeIfAbsent(key, k -> new ArrayList<>()).add(f);
            }
        }
        int tasks = keyless.size() + chains.size();
        b.remaining.set(tasks);
        outstanding.addAndGet(tasks);
        for (Fetched f : keyless) {
            submit.accept(() -> {
                try {
                    if (live(b)) {
                        runOne(b, f);
                    }
                } finally {
                    finishOne(b);
                }
            });
        }
        for (Map.Entry<String, List<Fetched>> e : chains.entrySet()) {
            submit.accept(() -> {
                try {
                    runChain(b, e.getKey(), e.getValue());
                } finally {
                    finishOne(b);
                }
            });
        }
        if (tasks == 0) {
            finish(b);
        }
    }

    /**
     * Whether the batch may start another delivery: running, not lost, and the bucket's lease holds by our clock. A
     * lease that ran out by our clock (a late renewal) stops new deliveries but does not throw the batch away: its
     * commit guard decides whether the bucket is still ours, and what did not run becomes ready rows.
     */
    private boolean live(BucketBatch b) {
        return !b.lost && leases.holds(b.bucket) && running.getAsBoolean();
    }

    /** A key's messages one after another; an unresolved one (a retry, a delay) defers the rest, a dead one does not. */
    private void runChain(BucketBatch b, String key, List<Fetched> chain) {
        if (!keys.tryTake(key)) {
            // A row of the key runs here right now (a redriven or woken row): the chain waits as deferred rows,
            // woken when this batch commits.
            for (Fetched f : chain) {
                defer(b, f, b.runs.attempt(f.id()));
            }
            b.wake.add(key);
            return;
        }
        try {
            boolean blocked = false;
            for (Fetched f : chain) {
                if (blocked) {
                    defer(b, f, b.runs.attempt(f.id()));
                    continue;
                }
                if (!live(b)) {
                    return; // not run: the batch is refused (lost) or given back as rows (a stop)
                }
                RowStatus status = runOne(b, f);
                blocked = status == RowStatus.READY;
            }
        } finally {
            keys.let(key);
        }
    }

    /**
     * A message of a bucket that was handed out more than {@code maxRangeReclaims} times without a commit (each
     * holder died or lost the bucket while it ran — a message that kills its process, or hangs past the lease):
     * it becomes a {@code ready} exception row carrying those deliveries as attempts, so the exception queue's retry
     * policy takes it on (and it ends dead if it keeps failing), and the bucket's position moves on.
     */
    private void quarantine(BucketBatch b, Fetched f) {
        int runs = b.runs.handedOut(f.id());
        b.addRow(new OutcomeRow(f.id(), RowStatus.READY, f.messageKey(), runs, 0, 0,
                "quarantined: its bucket was handed out " + runs + " times without a commit", null));
        if (!b.quarantined) {
            b.quarantined = true;
            ConsumerContext.log.warn("bucket batch quarantined: group={} {} runs={} tops {}", ctx.g.groupName(), b, runs,
                    java.util.Arrays.toString(b.runs.tops()));
        }
    }

    private void defer(BucketBatch b, Fetched f, int attempt) {
        ctx.stats.deferred.increment();
        b.addRow(Outcomes.deferredInRange(f.id(), f.messageKey(), attempt));
        b.event(ctx, f.id(), attempt, DeliveryEvent.DEFERRED, null);
        if (f.messageKey() != null) {
            b.wake.add(f.messageKey()); // its blocker may resolve before the row exists: wake it at the commit
        }
    }

    /**
     * Runs one message and records its outcome in the batch: attempt 1, or one more than the earlier hand-outs of
     * its bucket that reached it and never committed.
     */
    private RowStatus runOne(BucketBatch b, Fetched f) {
        return b.runOne(ctx, delivery, outcomes, f, b.runs.attempt(f.id()));
    }

    private void finishOne(BucketBatch b) {
        outstanding.decrementAndGet();
        if (b.remaining.decrementAndGet() == 0) {
            finish(b);
        }
        wake.run();
    }

    /** A batch finished (or was refused): commit it, with whatever else finished meanwhile. */
    private void finish(BucketBatch b) {
        if (b.lost) {
            if (!b.done) {
                b.done = true;
                ctx.stats.leasesLost.increment();
                positions.finished(b, false);
            }
            return;
        }
        finished.add(b);
        if (b.wave.decrementAndGet() > 0 && running.getAsBoolean()) {
            holdWake.run(); // the others of its claim are still running: commit with them (or after the hold)
            return;
        }
        commitFinished();
    }

    /** Whether finished batches wait for their commit. */
    boolean holding() {
        return !finished.isEmpty();
    }

    /** Stores the dirty positions of idle buckets when no batch commit carried them for a while. */
    void flush() {
        if (committing.compareAndSet(false, true)) {
            try {
                if (!positions.dirty().isEmpty()) {
                    commit(List.of());
                }
            } finally {
                committing.set(false);
            }
            commitFinished();
        }
    }

    /**
     * Commits every finished batch: the thread that finds no commit running takes them all (and what finishes while
     * it commits), so batches finishing together share one transaction.
     */
    void commitFinished() {
        while (!finished.isEmpty() && committing.compareAndSet(false, true)) {
            try {
                Set<BucketBatch> list = new java.util.LinkedHashSet<>();
                BucketBatch next;
                while ((next = finished.poll()) != null) {
                    if (!next.done) {
                        list.add(next);
                    }
                }
                if (!list.isEmpty()) {
                    commit(new ArrayList<>(list));
                }
            } finally {
                committing.set(false);
            }
        }
    }

    /**
     * A clean stop: batches whose handlers did not all finish are committed as they are — what did not finish
     * becomes ready rows ({@link BucketBatch#rowsWithUnfinished}), so nothing completed runs again. Waits for a
     * commit in progress; a handler finishing later finds its batch done.
     */
    void commitUnfinished(List<BucketBatch> open) {
        finished.addAll(open);
        long deadline = System.nanoTime() + GroupConsumer.RELEASE_LIMIT.toNanos();
        while (!finished.isEmpty() && System.nanoTime() < deadline) {
            commitFinished();
            if (!finished.isEmpty()) {
                java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
            }
        }
    }

    /**
     * Writes the batches' rows, events and positions in one transaction, for the buckets whose lease still holds
     * (the others' batches are refused: their new owner runs them again). A message that was not run (a stop)
     * becomes a ready row, so the position can move past it ({@link BucketBatch#rowsWithUnfinished}); the dirty
     * positions of idle buckets are carried along.
     */
    private void commit(List<BucketBatch> list) {
        Map<Integer, Long> carried = positions.dirty();
        Set<Integer> wanted = new HashSet<>(carried.keySet());
        list.forEach(b -> wanted.add(b.bucket));
        Set<Integer> held;
        try {
            held = ctx.db.transaction("commit bucket batches", c -> {
                Set<Integer> live = leases.lockHeld(c, wanted);
                List<OutcomeRow> rows = new ArrayList<>();
                List<LogEvent> events = new ArrayList<>();
                Map<Integer, Long> moved = new HashMap<>();
                Set<String> wakeKeys = new HashSet<>();
                for (Map.Entry<Integer, Long> e : carried.entrySet()) {
                    if (live.contains(e.getKey())) {
                        moved.put(e.getKey(), e.getValue());
                    }
                }
                for (BucketBatch b : list) {
                    // A batch of a bucket this member lost is stale even when the member holds the bucket again now
                    // (it took it back after a late renewal): the new holding runs it again from the stored position.
                    // Read after lockHeld: a loss is marked before any later step can take the bucket back.
                    if (!live.contains(b.bucket) || b.lost) {
                        continue;
                    }
                    rows.addAll(b.rowsWithUnfinished());
                    events.addAll(b.eventsSnapshot());
                    moved.merge(b.bucket, b.high, Math::max);
                    wakeKeys.addAll(b.wake);
                }
                queue.insertRows(c, rows);
                queue.insertEvents(c, events);
                claims.advance(c, moved);
                if (!wakeKeys.isEmpty()) {
                    keys.wakeNext(c, wakeKeys);
                }
                return live;
            });
        } catch (RuntimeException e) {
            ctx.warn("could not commit bucket batches; they are delivered again", e);
            held = Set.of();
        }
        Map<Integer, Long> stored = new HashMap<>();
        for (Map.Entry<Integer, Long> e : carried.entrySet()) {
            if (held.contains(e.getKey())) {
                stored.put(e.getKey(), e.getValue());
            }
        }
        positions.stored(stored);
        for (BucketBatch b : list) {
            b.done = true;
            boolean ok = held.contains(b.bucket) && !b.lost;
            if (!ok) {
                ctx.stats.leasesLost.increment();
                ConsumerContext.log.warn("bucket batch refused, lease lost: group={} {}", ctx.g.groupName(), b);
            }
            positions.finished(b, ok);
        }
    }
}
