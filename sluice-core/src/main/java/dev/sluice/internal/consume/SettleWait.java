package dev.sluice.internal.consume;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The wait of a claim whose fence observation is pending (a transaction the fence must wait for): read-only re-checks
 * (no xid) with a short growing wait until it settles — then the caller claims at once — or until the settle time is
 * over (then the caller polls as usual). A loop's state: used from its own runs only.
 */
final class SettleWait {
    private final long maxWaitMillis;
    private final long afterMillis;
    /** Until when (System.nanoTime) the loop re-checks; 0 when not waiting. */
    private long deadline;
    private long waitMicros;

    /** {@code pollIntervalMillis}: the consumer's poll interval (the settle time is at most 200 ms of it). */
    SettleWait(long pollIntervalMillis) {
        this.maxWaitMillis = Math.min(200, pollIntervalMillis);
        this.afterMillis = Math.min(100, pollIntervalMillis);
    }

    boolean waiting() {
        return deadline != 0;
    }

    /** Starts waiting; returns the first wait. */
    long begin() {
        deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(maxWaitMillis);
        waitMicros = 400;
        return TimeUnit.MICROSECONDS.toNanos(200);
    }

    /** One re-check: null when settled (claim now), else how long to wait before the next poll. */
    Long next(BooleanSupplier settled) {
        if (settled.getAsBoolean()) {
            deadline = 0;
            return null;
        }
        if (System.nanoTime() - deadline < 0) {
            long wait = TimeUnit.MICROSECONDS.toNanos(waitMicros);
            waitMicros = Math.min(20_000, waitMicros * 2);
            return wait;
        }
        deadline = 0;
        return TimeUnit.MILLISECONDS.toNanos(afterMillis);
    }
}
