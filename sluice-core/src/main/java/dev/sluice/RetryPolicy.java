package dev.sluice;

import dev.sluice.internal.runtime.Backoff;
import java.time.Duration;
import java.util.Objects;

/**
 * How a consumer group retries failed messages: exponential backoff with jitter, then a dead letter.
 *
 * @param maxAttempts    deliveries before a failing message is dead, counting the first (default 5)
 * @param initialBackoff wait after the first failure (default 1 s)
 * @param multiplier     growth per further failure (default 2.0)
 * @param maxBackoff     cap on the wait (default 5 min)
 * @param jitter         fraction of the wait randomized downwards, 0..1 (default 0.2)
 */
public record RetryPolicy(int maxAttempts, Duration initialBackoff, double multiplier, Duration maxBackoff, double jitter) {
    public static final RetryPolicy DEFAULT = new RetryPolicy(5, Duration.ofSeconds(1), 2.0, Duration.ofMinutes(5), 0.2);

    public RetryPolicy {
        Objects.requireNonNull(initialBackoff, "initialBackoff");
        Objects.requireNonNull(maxBackoff, "maxBackoff");
        if (maxAttempts < 1 || maxAttempts > 1000) {
            throw new SluiceException(ErrorCode.INVALID_CONFIG, "maxAttempts must be between 1 and 1000 (got " + maxAttempts + ")");
        }
        if (initialBackoff.isNegative() || maxBackoff.isNegative() || maxBackoff.compareTo(initialBackoff) < 0) {
            throw new SluiceException(ErrorCode.INVALID_CONFIG, "backoff must satisfy 0 <= initialBackoff <= maxBackoff");
        }
        if (!(multiplier >= 1.0) || multiplier > 100) {
            throw new SluiceException(ErrorCode.INVALID_CONFIG, "multiplier must be between 1 and 100 (got " + multiplier + ")");
        }
        if (!(jitter >= 0 && jitter <= 1)) {
            throw new SluiceException(ErrorCode.INVALID_CONFIG, "jitter must be between 0 and 1 (got " + jitter + ")");
        }
    }

    /**
     * The wait before the next delivery after {@code failedAttempts} failures (1 for the first), before
     * jitter: {@code min(maxBackoff, initialBackoff * multiplier^(failedAttempts-1))} (the formula queues use too,
     * with a multiplier of 2).
     */
    public Duration backoff(int failedAttempts) {
        return Backoff.wait(initialBackoff, multiplier, maxBackoff, failedAttempts);
    }

    public RetryPolicy withMaxAttempts(int n) {
        return new RetryPolicy(n, initialBackoff, multiplier, maxBackoff, jitter);
    }

    public RetryPolicy withBackoff(Duration initial, double multiplier, Duration max) {
        return new RetryPolicy(maxAttempts, initial, multiplier, max, jitter);
    }

    public RetryPolicy withJitter(double j) {
        return new RetryPolicy(maxAttempts, initialBackoff, multiplier, maxBackoff, j);
    }
}
