package dev.sluice.internal.consume;

import dev.sluice.ConcurrencyPolicy;
import dev.sluice.Outcome;
import dev.sluice.internal.consume.RangeWork.OutcomeRow;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * Runs claimed ranges: skips and scheduled messages, the handler tasks (per message for {@code parallel}, per
 * key chain for the keyed policies, with chains whose key is busy waiting in memory and then deferred), the
 * outcomes they collect, and the range's completion — outcome rows, events, key release and wake-ups with the
 * lease's deletion in one transaction (docs/consume.md).
 */
final class RangeRunner<T> {
    /** A chain whose key was busy when its range was dispatched; counted in its range's remaining tasks. */
    private record WaitingChain(RangeWork w, String key, List<Fetched> chain, int attempt, long deadlineNanos) {
    }

    private final ConsumerContext ctx;
    private final RangeClaims claims;
    private final ExceptionQueue<T> queue;
    private final Delivery<T> delivery;
    private final KeyLeases keys;
    private final Outcomes outcomes;
    private final Consumer<Runnable> submit;
    private final AtomicInteger outstanding;
    private final Runnable wake;
    private final BooleanSupplier running;
    private final long keyWaitNanos;
    /** Told when chains start waiting for a busy key (schedules their retry). */
    private final Runnable chainsWaiting;
    /** The ranges this consumer holds now (their leases are renewed). */
    final Map<Long, RangeWork> open = new ConcurrentHashMap<>();
    private final Queue<WaitingChain> waiting = new ConcurrentLinkedQueue<>();

    RangeRunner(ConsumerContext ctx, RangeClaims claims, ExceptionQueue<T> queue, Delivery<T> delivery, KeyLeases keys,
                Outcomes outcomes, Consumer<Runnable> submit, AtomicInteger outstanding, Runnable wake, BooleanSupplier running,
                long keyWaitNanos, Runnable chainsWaiting) {
        this.ctx = ctx;
        this.claims = claims;
        this.queue = queue;
        this.delivery = delivery;
        this.keys = keys;
        this.outcomes = outcomes;
        this.submit = submit;
        this.outstanding = outstanding;
        this.wake = wake;
        this.running = running;
        this.keyWaitNanos = keyWaitNanos;
        this.chainsWaiting = chainsWaiting;
    }

    /** Starts a claimed range: fetches its messages unless the claim brought them, and hands them out. */
    void start(RangeWork w, List<Fetched> prefetched) {
        RangeWork earlier = open.put(w.leaseId, w);
        if (earlier != null) {
            // This consumer took its own expired range over (its renewal came late): the earlier holding is stale
            // like another consumer's — it starts nothing more, and its completion is refused (reclaims differ).
            earlier.lost = true;
        }
        try {
            dispatch(w, prefetched == null ? delivery.fetchRange(w) : prefetched);
        } catch (RuntimeException e) {
            // Nothing was handed to handlers (or what was keeps running): stop renewing the range and give
            // it back at once (as a clean stop does) so that it is taken over now, not when its lease expires;
            // if even that fails, it expires.
            if (w.remaining.get() == 0 && !w.done) {
                w.done = true;
                open.remove(w.leaseId, w);
                try {
                    ctx.db.transaction("give back a range", c -> {
                        claims.release(c, w, w.resolved, false);
                        return null;
                    });
                } catch (RuntimeException release) {
                    e.addSuppressed(release);
                }
            }
            throw e;
        }
    }

    private void dispatch(RangeWork w, List<Fetched> fetched) {
        Bindings b = delivery.bindings(w.high);
        List<Fetched> runnable = new ArrayList<>();
        Instant now = Instant.now();
        for (Fetched f : fetched) {
            if (delivery.skip(f, b)) {
                w.resolved.add(f.id());
                continue;
            }
            Instant deliverAt = Delivery.deliverAt(f);
            if (deliverAt != null && deliverAt.isAfter(now)) {
                w.addRow(new OutcomeRow(f.id(), RowStatus.READY, f.messageKey(), 0, 0,
                        Duration.between(now, deliverAt).toMillis() / 1000.0, null, null));
                continue;
            }
            runnable.add(f);
        }
        int attempt = w.reclaims + 1;
        if (!keys.keyed()) {
            w.remaining.set(runnable.size());
            outstanding.addAndGet(runnable.size());
            boolean later = delivery.async();
            for (Fetched f : runnable) {
                if (later) {
                    // The outcome arrives later (AsyncHandler): the message starts here, on the loop, and its outcome
                    // is recorded on the thread that completes it; no thread waits per message.
                    w.started.add(f.id());
                    delivery.deliverLater(f, attempt, out -> recordLater(w, f, out, attempt));
                } else {
                    submit.accept(() -> {
                        runOneHeld(w, f, attempt);
                        finishOne(w);
                    });
                }
            }
        } else {
            Map<String, List<Fetched>> chains = new TreeMap<>();
            List<Fetched> keyless = new ArrayList<>();
            for (Fetched f : runnable) {
                if (f.messageKey() == null) {
                    keyless.add(f);
                } else {
                    chains.computeIfAbsent(f.messageKey(), k -> new ArrayList<>()).add(f);
                }
            }
            Set<String> runnableKeys = keys.acquire(w, chains);
            // A busy key usually frees within milliseconds (another range's chain of it is running): its chain
            // waits in memory and retries, and becomes deferred rows only when the key stays busy longer.
            List<WaitingChain> blocked = new ArrayList<>();
            long deadline = System.nanoTime() + keyWaitNanos;
            for (Map.Entry<String, List<Fetched>> e : chains.entrySet()) {
                if (!runnableKeys.contains(e.getKey())) {
                    blocked.add(new WaitingChain(w, e.getKey(), e.getValue(), attempt, deadline));
                }
            }
            int tasks = keyless.size() + chains.size();
            w.remaining.set(tasks);
            outstanding.addAndGet(tasks);
            for (Fetched f : keyless) {
                submit.accept(() -> {
                    runOneHeld(w, f, attempt);
                    finishOne(w);
                });
            }
            for (Map.Entry<String, List<Fetched>> e : chains.entrySet()) {
                if (runnableKeys.contains(e.getKey())) {
                    List<Fetched> chain = e.getValue();
                    submit.accept(() -> {
                        runChain(w, chain, attempt);
                        finishOne(w);
                    });
                }
            }
            if (!blocked.isEmpty()) {
                waiting.addAll(blocked);
                chainsWaiting.run();
            }
        }
        if (w.remaining.get() == 0) {
            complete(w);
        }
    }

    /**
     * Retries the keys of waiting chains (one key transaction per range): a chain whose key is now free runs,
     * one whose key stayed busy past its deadline — or any, once stopping — becomes deferred rows.
     */
    /** Whether chains wait for a busy key. */
    boolean hasWaiting() {
        return !waiting.isEmpty();
    }

    void retryWaiting() {
        if (waiting.isEmpty()) {
            return;
        }
        List<WaitingChain> batch = new ArrayList<>();
        WaitingChain next;
        while ((next = waiting.poll()) != null) {
            batch.add(next);
        }
        Map<RangeWork, Map<String, WaitingChain>> byRange = new LinkedHashMap<>();
        for (WaitingChain wc : batch) {
            byRange.computeIfAbsent(wc.w(), k -> new TreeMap<>()).put(wc.key(), wc);
        }
        long now = System.nanoTime();
        for (Map.Entry<RangeWork, Map<String, WaitingChain>> e : byRange.entrySet()) {
            RangeWork w = e.getKey();
            Set<String> got = Set.of();
            if (running.getAsBoolean() && !w.lost) {
                Map<String, List<Fetched>> chains = new TreeMap<>();
                e.getValue().forEach((k, wc) -> chains.put(k, wc.chain()));
                try {
                    got = keys.acquire(w, chains);
                } catch (RuntimeException ex) {
                    ctx.warn("could not retry busy keys", ex);
                }
            }
            for (WaitingChain wc : e.getValue().values()) {
                if (got.contains(wc.key())) {
                    submit.accept(() -> {
                        runChain(w, wc.chain(), wc.attempt());
                        finishOne(w);
                    });
                } else if (!running.getAsBoolean() || w.lost || now - wc.deadlineNanos() > 0) {
                    defer(w, wc.chain(), wc.attempt());
                    finishOne(w);
                } else {
                    waiting.add(wc);
                }
            }
        }
    }

    private void defer(RangeWork w, List<Fetched> chain, int attempt) {
        for (Fetched f : chain) {
            deferOne(w, f, attempt);
        }
    }

    private void deferOne(RangeWork w, Fetched f, int attempt) {
        ctx.stats.deferred.increment();
        w.addRow(Outcomes.deferredInRange(f.id(), f.messageKey(), attempt));
        w.event(ctx, f.id(), attempt, DeliveryEvent.DEFERRED, null);
    }

    /** Same-key messages of a range run one after another; for ordered, an unresolved one defers the rest. */
    private void runChain(RangeWork w, List<Fetched> chain, int attempt) {
        boolean blocked = false;
        for (Fetched f : chain) {
            if (blocked || !running.getAsBoolean() && w.lost) {
                deferOne(w, f, attempt);
                continue;
            }
            if (!w.held()) {
                notStarted(w, f, attempt);
                continue;
            }
            RowStatus status = runOne(w, f, attempt);
            if (ctx.policy == ConcurrencyPolicy.ORDERED && status == RowStatus.READY) {
                blocked = true;
            }
        }
    }

    /**
     * A message whose turn came after the range's lease ran out by this process's clock (a renewal failed or came
     * late — a database restart, a stall — while an earlier message of its chain, or the handlers before it, ran): it
     * is not started, since another consumer may have taken the range over and run it already. It becomes a
     * {@code ready} row (its attempt not spent) in case the completion is still accepted; if it is refused, the new
     * holder runs it.
     */
    private void notStarted(RangeWork w, Fetched f, int attempt) {
        w.addRow(new OutcomeRow(f.id(), RowStatus.READY, f.messageKey(), attempt - 1, 0, 0, null, null));
    }

    /** Runs one message of a range unless its lease ran out meanwhile; records its outcome in the range. */
    private void runOneHeld(RangeWork w, Fetched f, int attempt) {
        if (w.held()) {
            runOne(w, f, attempt);
        } else {
            notStarted(w, f, attempt);
        }
    }

    /** Runs one message of a range; records its outcome in the range. Returns the row status written, or null for success. */
    private RowStatus runOne(RangeWork w, Fetched f, int attempt) {
        return w.runOne(ctx, delivery, outcomes, f, attempt);
    }

    /** Records an outcome that arrived later; after a release it changes nothing, so it is not counted either. */
    private void recordLater(RangeWork w, Fetched f, Outcome out, int attempt) {
        try {
            if (!w.done) {
                w.record(ctx, outcomes, f, out, attempt);
            }
        } catch (RuntimeException e) {
            ctx.warn("could not record an outcome", e);
        } finally {
            finishOne(w);
        }
    }

    private void finishOne(RangeWork w) {
        outstanding.decrementAndGet();
        if (w.remaining.decrementAndGet() == 0) {
            complete(w);
        }
        wake.run();
    }

    /** Writes a finished range's outcome rows and deletes its lease in one transaction (live holders only). */
    private void complete(RangeWork w) {
        if (w.done) {
            return;
        }
        w.done = true;
        open.remove(w.leaseId, w); // not a newer holding of the same lease (a takeover by this consumer)
        try {
            boolean ok = w.keys.isEmpty() && w.rowsSnapshot().isEmpty() && w.eventsSnapshot().isEmpty()
                    ? claims.completeQuiet(w) : ctx.db.transaction("complete a range", c -> {
                if (!claims.complete(c, w)) {
                    return false;
                }
                List<OutcomeRow> written = w.rowsSnapshot();
                queue.insertRows(c, written);
                queue.insertEvents(c, w.eventsSnapshot());
                Set<String> wake = new HashSet<>(w.keys);
                for (OutcomeRow r : written) {
                    if (r.status() == RowStatus.DEFERRED && r.messageKey() != null) {
                        wake.add(r.messageKey()); // its blocker may be gone already: do not wait for the re-check
                    }
                }
                if (!w.keys.isEmpty()) {
                    keys.release(c, w.keys);
                }
                if (!wake.isEmpty()) {
                    keys.wakeNext(c, wake);
                }
                return true;
            });
            if (!ok) {
                ctx.stats.leasesLost.increment();
                ConsumerContext.log.warn("range outcome refused, lease lost: group={} low={} high={}", ctx.g.groupName(), w.low, w.high);
            }
        } catch (RuntimeException e) {
            ctx.warn("could not record a range's outcome; it will be redelivered after its lease", e);
        }
    }

    /**
     * A clean stop: gives an unfinished range back with what is resolved so far (its rows written with it). When a
     * handler started here has no outcome (it outlived the shutdown timeout), the next holder's takeover counts as a
     * reclaim — its deliveries are attempt {@code reclaims + 1}, as after an expiry — since that message is delivered
     * again; a range given back with nothing started and unfinished is taken over uncounted.
     */
    void release(java.sql.Connection c, RangeWork w) throws java.sql.SQLException {
        queue.insertRows(c, w.rowsSnapshot());
        queue.insertEvents(c, w.eventsSnapshot());
        claims.release(c, w, w.resolvedWithRows(), w.anyUnfinished());
    }
}
