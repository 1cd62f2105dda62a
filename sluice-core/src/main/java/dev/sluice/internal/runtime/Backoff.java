package dev.sluice.internal.runtime;

import java.time.Duration;

/**
 * The one definition of the retry backoff, for streams ({@code RetryPolicy}, applied by the consumer's
 * outcomes) and queues (a failed job): the wait after the {@code n}-th failed attempt is
 * {@code min(max, base × multiplier^(n-1))}, shortened by up to a jitter fraction. Queues use a multiplier of
 * {@link #QUEUE_MULTIPLIER} and a jitter of {@link #QUEUE_JITTER}; their statements compute the same formula in
 * SQL from the row's stamped options (one statement settles or rescues many rows at once), and
 * {@code BackoffAgreementTest} proves both give the same wait for attempts 1 to 30.
 */
public final class Backoff {
    /** A queue's wait doubles per failed attempt. */
    public static final double QUEUE_MULTIPLIER = 2.0;
    /** A queue's wait is shortened by up to 10 %. */
    public static final double QUEUE_JITTER = 0.1;

    private Backoff() {
    }

    /** {@code min(max, base × multiplier^(failedAttempts-1))}, before jitter; attempts below 1 count as 1. */
    public static Duration wait(Duration base, double multiplier, Duration max, int failedAttempts) {
        double nanos = base.toNanos() * Math.pow(multiplier, Math.max(0, failedAttempts - 1));
        return nanos >= max.toNanos() ? max : Duration.ofNanos((long) nanos);
    }

    /** A queue job's wait after {@code failedAttempts} failures, before jitter. */
    public static Duration queueWait(Duration base, Duration max, int failedAttempts) {
        return wait(base, QUEUE_MULTIPLIER, max, failedAttempts);
    }

    /** {@code wait × (1 − jitter × random)}, {@code random} uniform in [0, 1). */
    public static Duration jittered(Duration wait, double jitter, double random) {
        return Duration.ofNanos((long) (wait.toNanos() * (1 - jitter * random)));
    }
}
