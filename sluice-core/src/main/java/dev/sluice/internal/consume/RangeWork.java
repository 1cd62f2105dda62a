package dev.sluice.internal.consume;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** The in-memory state of one claimed range while its messages run. */
final class RangeWork extends OutcomeRecord {
    final long leaseId;
    final long low;
    final long high;
    final int reclaims;
    /** Keys whose lease this range holds (exclusive/ordered). */
    final Set<String> keys = ConcurrentHashMap.newKeySet();
    final AtomicInteger remaining = new AtomicInteger();
    volatile boolean lost;
    volatile boolean done;
    /**
     * Until when the lease holds by this process's clock ({@link System#nanoTime}): the time the claim or the last
     * successful renewal was sent, plus the lease. No delivery of the range starts after it.
     */
    volatile long heldUntilNanos;

    RangeWork(long leaseId, long low, long high, int reclaims, Set<Long> resolvedBefore, long heldUntilNanos) {
        this.heldUntilNanos = heldUntilNanos;
        this.leaseId = leaseId;
        this.low = low;
        this.high = high;
        this.reclaims = reclaims;
        this.resolved.addAll(resolvedBefore);
    }

    /** Whether a delivery may start now: the lease was not lost and holds by this process's clock. */
    boolean held() {
        return !lost && System.nanoTime() - heldUntilNanos < 0;
    }


    /** An exception-queue row produced by an outcome. */
    record OutcomeRow(long id, RowStatus status, String messageKey, int attempts, int delays, double afterSeconds,
                      String error, String stack) {
    }

    /** A delivery-log event. */
    record LogEvent(long id, int attempt, DeliveryEvent status, String error) {
    }
}
