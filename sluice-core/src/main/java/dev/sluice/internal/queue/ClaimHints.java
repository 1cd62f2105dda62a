package dev.sluice.internal.queue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Where a worker's next claim starts its scan of each priority: a little before the first job its last
 * claim took there. Shared by the claim loops of one worker.
 *
 * <p>Why: a drained job leaves its entry in {@code job_claim_idx} (the old, pending row version) until
 * VACUUM removes it, and a claim that starts at the beginning of a priority's range walks every such leaf
 * page first. Measured on PostgreSQL 15: 179k jobs into a drain, the claim's index scan read 1,190 pages
 * to find the first pending entry (3.3 ms; 13 µs per claimed job) instead of 48 — the cost grows with
 * every job drained since the last VACUUM. Starting at a lower bound positions the scan past them in one
 * descent.
 *
 * <p>What may lie below a bound: a job made pending again at its old place (a rescued or released claim,
 * a revived job), an enqueue whose transaction started before the bound's job was claimed and committed
 * after (its {@code run_at} is its transaction's start), a job enqueued with a {@code runAt} in the past,
 * a row another claimer held locked at that moment. The bound keeps {@link #SLACK_MICROS} of room for the
 * late commits, and the scan starts at the very beginning — no bound at all — on the first claim, at least
 * every {@link #FULL_SCAN_NANOS}, after any claim that came back short (the bounded range ran dry), after
 * the worker gave claims back and after its maintenance tick rescued expired claims ({@link #reset()}).
 * So such a job waits at most that long longer than it would otherwise; within the scanned range the
 * claim order is the same ({@code priority DESC, run_at, id}). {@code Queue.claim(n)} never uses bounds.
 */
final class ClaimHints {
    /** Room below the first job claimed for enqueues that committed late (their run_at is their start). */
    static final long SLACK_MICROS = TimeUnit.MILLISECONDS.toMicros(50);
    /** The longest time between two unbounded claims of one worker. */
    static final long FULL_SCAN_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

    /** The bounds of one claim: parallel arrays, priority and the lowest run_at (epoch microseconds) to scan. */
    record Bounds(int[] priorities, long[] fromMicros) {
        static final Bounds NONE = new Bounds(new int[0], new long[0]);

        boolean unbounded() {
            return priorities.length == 0;
        }
    }

    private final Map<Integer, Long> from = new HashMap<>();
    private final LongSupplier clock;
    private long nextFullScan;

    ClaimHints() {
        this(System::nanoTime);
    }

    /** Hints on this monotonic nanosecond clock (tests move it). */
    ClaimHints(LongSupplier clock) {
        this.clock = clock;
        this.nextFullScan = clock.getAsLong();
    }

    /** The bounds the next claim should use: none when a full scan is due. */
    synchronized Bounds next() {
        long now = clock.getAsLong();
        if (from.isEmpty() || now - nextFullScan >= 0) {
            nextFullScan = now + FULL_SCAN_NANOS;
            return Bounds.NONE;
        }
        int[] p = new int[from.size()];
        long[] f = new long[from.size()];
        int i = 0;
        for (Map.Entry<Integer, Long> e : from.entrySet()) {
            p[i] = e.getKey();
            f[i++] = e.getValue();
        }
        return new Bounds(p, f);
    }

    /**
     * Records a claim's result: a short one clears every bound (the next claim scans from the start); a full
     * one sets each priority's bound to its first claimed job's run_at less the slack.
     */
    synchronized void claimed(List<JobStore.Claimed> got, int asked) {
        if (got.size() < asked) {
            from.clear();
            return;
        }
        Map<Integer, Long> first = new HashMap<>();
        for (JobStore.Claimed c : got) {
            first.merge(c.priority(), JobValues.micros(c.runAt()), Math::min);
        }
        first.forEach((p, us) -> from.put(p, us - SLACK_MICROS));
    }

    /** Forgets every bound: the next claim scans from the start (after claims were given back or rescued). */
    synchronized void reset() {
        from.clear();
    }
}
