package dev.sluice;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executor;

/**
 * Session options of one {@link ConsumerGroup#consume} call (not stored; the group's declaration is
 * {@link GroupConfig}).
 *
 * @param batchSize        most messages one range claim (or one exception claim) takes (default 64)
 * @param concurrency      handler invocations running at once (default 8)
 * @param executor         where handlers run; {@code null} means platform threads owned by the consumption
 *                         (pass e.g. a virtual-thread executor on Java 21+)
 * @param leaseTimeout     how long a claim is held without renewal; renewed every third of it while handlers run,
 *                         so it bounds crash recovery, not handler duration (default 30 s)
 * @param pollInterval     fallback poll while wake-ups are unavailable (default 1 s); with a healthy LISTEN
 *                         connection an idle consumer only re-checks at due times and every {@code idleCheck}
 * @param idleCheck        safety re-check of an idle group when wake-ups are healthy (default 30 s)
 * @param shutdownTimeout  how long {@link Consumption#close()} waits for running handlers (default 30 s)
 * @param wakeups          use LISTEN/NOTIFY wake-ups (default true); false polls every {@code pollInterval}
 */
public record ConsumeOptions(int batchSize, int concurrency, Executor executor, Duration leaseTimeout,
                             Duration pollInterval, Duration idleCheck, Duration shutdownTimeout, boolean wakeups) {

    public ConsumeOptions {
        Objects.requireNonNull(leaseTimeout, "leaseTimeout");
        Objects.requireNonNull(pollInterval, "pollInterval");
        Objects.requireNonNull(idleCheck, "idleCheck");
        Objects.requireNonNull(shutdownTimeout, "shutdownTimeout");
        if (batchSize < 1 || batchSize > 10_000) {
            throw invalid("batchSize must be between 1 and 10000 (got " + batchSize + ")");
        }
        if (concurrency < 1 || concurrency > 10_000) {
            throw invalid("concurrency must be between 1 and 10000 (got " + concurrency + ")");
        }
        if (leaseTimeout.compareTo(Duration.ofMillis(300)) < 0) {
            throw invalid("leaseTimeout must be at least 300 ms (got " + leaseTimeout + ")");
        }
        if (pollInterval.compareTo(Duration.ofMillis(10)) < 0 || idleCheck.compareTo(Duration.ofMillis(10)) < 0) {
            throw invalid("pollInterval and idleCheck must be at least 10 ms");
        }
        if (shutdownTimeout.isNegative()) {
            throw invalid("shutdownTimeout must not be negative");
        }
    }

    private static SluiceException invalid(String problem) {
        return new SluiceException(ErrorCode.INVALID_CONFIG, problem);
    }

    public static ConsumeOptions defaults() {
        return new ConsumeOptions(64, 8, null, Duration.ofSeconds(30), Duration.ofSeconds(1), Duration.ofSeconds(30),
                Duration.ofSeconds(30), true);
    }

    public ConsumeOptions withBatchSize(int n) {
        return new ConsumeOptions(n, concurrency, executor, leaseTimeout, pollInterval, idleCheck, shutdownTimeout, wakeups);
    }

    public ConsumeOptions withConcurrency(int n) {
        return new ConsumeOptions(batchSize, n, executor, leaseTimeout, pollInterval, idleCheck, shutdownTimeout, wakeups);
    }

    public ConsumeOptions withExecutor(Executor e) {
        return new ConsumeOptions(batchSize, concurrency, e, leaseTimeout, pollInterval, idleCheck, shutdownTimeout, wakeups);
    }

    public ConsumeOptions withLeaseTimeout(Duration d) {
        return new ConsumeOptions(batchSize, concurrency, executor, d, pollInterval, idleCheck, shutdownTimeout, wakeups);
    }

    public ConsumeOptions withPollInterval(Duration d) {
        return new ConsumeOptions(batchSize, concurrency, executor, leaseTimeout, d, idleCheck, shutdownTimeout, wakeups);
    }

    public ConsumeOptions withIdleCheck(Duration d) {
        return new ConsumeOptions(batchSize, concurrency, executor, leaseTimeout, pollInterval, d, shutdownTimeout, wakeups);
    }

    public ConsumeOptions withShutdownTimeout(Duration d) {
        return new ConsumeOptions(batchSize, concurrency, executor, leaseTimeout, pollInterval, idleCheck, d, wakeups);
    }

    public ConsumeOptions withWakeups(boolean on) {
        return new ConsumeOptions(batchSize, concurrency, executor, leaseTimeout, pollInterval, idleCheck, shutdownTimeout, on);
    }
}
