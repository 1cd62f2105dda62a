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
 * @param executor         where handlers run; {@code null} means the client's shared handler threads
 *                         ({@code Sluice.Builder.runtimeThreads}, 64 by default, shared by every consumption and
 *                         worker of the client — so {@code concurrency} above that is reached only with an
 *                         executor of your own, e.g. a virtual-thread executor on Java 21+). Either way at most
 *                         {@code concurrency} handlers of this consumption run at once, and none of the
 *                         executor's threads waits for a slot
 * @param leaseTimeout     how long a claim is held without renewal; renewed every third of it while handlers run,
 *                         so it bounds crash recovery, not handler duration (default 30 s)
 * @param pollInterval     fallback poll while wake-ups are unavailable (default 1 s); with a healthy LISTEN
 *                         connection an idle consumer only re-checks at due times and every {@code idleCheck}
 * @param idleCheck        safety re-check of an idle group when wake-ups are healthy (default 30 s)
 * @param shutdownTimeout  how long {@link Consumption#close()} waits for running handlers (default 30 s)
 * @param wakeups          use LISTEN/NOTIFY wake-ups (default true); false polls every {@code pollInterval}
 * @param maxBytes         byte budget of one range claim: the claim ends before the message whose payload would
 *                         take the range's payloads past it (a first message larger than the budget is claimed
 *                         alone), so one fetch holds at most about this much payload in memory; the next claim
 *                         continues from there (default {@link ReadOptions#DEFAULT_MAX_BYTES}, 16 MiB)
 */
public record ConsumeOptions(int batchSize, int concurrency, Executor executor, Duration leaseTimeout,
                             Duration pollInterval, Duration idleCheck, Duration shutdownTimeout, boolean wakeups, long maxBytes) {

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
        if (maxBytes < 1) {
            throw invalid("maxBytes must be at least 1 (got " + maxBytes + ")");
        }
    }

    private static SluiceException invalid(String problem) {
        return new SluiceException(ErrorCode.INVALID_CONFIG, problem);
    }

    public static ConsumeOptions defaults() {
        return new ConsumeOptions(64, 8, null, Duration.ofSeconds(30), Duration.ofSeconds(1), Duration.ofSeconds(30),
                Duration.ofSeconds(30), true, ReadOptions.DEFAULT_MAX_BYTES);
    }

    public ConsumeOptions withBatchSize(int n) {
        return new ConsumeOptions(n, concurrency, executor, leaseTimeout, pollInterval, idleCheck, shutdownTimeout, wakeups, maxBytes);
    }

    public ConsumeOptions withConcurrency(int n) {
        return new ConsumeOptions(batchSize, n, executor, leaseTimeout, pollInterval, idleCheck, shutdownTimeout, wakeups, maxBytes);
    }

    public ConsumeOptions withExecutor(Executor e) {
        return new ConsumeOptions(batchSize, concurrency, e, leaseTimeout, pollInterval, idleCheck, shutdownTimeout, wakeups, maxBytes);
    }

    public ConsumeOptions withLeaseTimeout(Duration d) {
        return new ConsumeOptions(batchSize, concurrency, executor, d, pollInterval, idleCheck, shutdownTimeout, wakeups, maxBytes);
    }

    public ConsumeOptions withPollInterval(Duration d) {
        return new ConsumeOptions(batchSize, concurrency, executor, leaseTimeout, d, idleCheck, shutdownTimeout, wakeups, maxBytes);
    }

    public ConsumeOptions withIdleCheck(Duration d) {
        return new ConsumeOptions(batchSize, concurrency, executor, leaseTimeout, pollInterval, d, shutdownTimeout, wakeups, maxBytes);
    }

    public ConsumeOptions withShutdownTimeout(Duration d) {
        return new ConsumeOptions(batchSize, concurrency, executor, leaseTimeout, pollInterval, idleCheck, d, wakeups, maxBytes);
    }

    public ConsumeOptions withWakeups(boolean on) {
        return new ConsumeOptions(batchSize, concurrency, executor, leaseTimeout, pollInterval, idleCheck, shutdownTimeout, on, maxBytes);
    }

    /** These options with another byte budget per range claim. */
    public ConsumeOptions withMaxBytes(long bytes) {
        return new ConsumeOptions(batchSize, concurrency, executor, leaseTimeout, pollInterval, idleCheck, shutdownTimeout, wakeups,
                bytes);
    }
}
