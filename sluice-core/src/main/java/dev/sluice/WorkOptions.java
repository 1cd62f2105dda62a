package dev.sluice;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executor;

/**
 * Options of one {@link Queue#work} call (not stored).
 *
 * @param concurrency         handlers running at once; the worker claims only as many jobs as it has free
 *                            slots (default 8; 1 to 10000)
 * @param executor            where handlers run; {@code null} means the client's shared handler threads
 *                            ({@code Sluice.Builder.runtimeThreads}, 64 by default, shared by every consumption
 *                            and worker of the client — so {@code concurrency} above that is reached only with
 *                            an executor of your own, e.g. a virtual-thread executor on Java 21+). Either way at
 *                            most {@code concurrency} handlers of this worker run at once (prefetched jobs wait
 *                            their turn), and none of the executor's threads waits for a slot
 * @param pollInterval        the fallback poll while wake-ups are unavailable (LISTEN connection down, or
 *                            {@code wakeups} off) (default 1 s; at least 10 ms)
 * @param idleCheck           the safety re-check of an idle queue while wake-ups are healthy; an idle worker
 *                            otherwise sleeps until an enqueue wakes it or the next delayed job is due
 *                            (default 30 s; at least 10 ms)
 * @param shutdownTimeout     how long {@link Worker#close()} waits for running handlers before releasing their
 *                            claims (default 30 s; not negative)
 * @param maintenanceInterval how often the worker rescues expired claims of the schema's queues (a crashed
 *                            peer's jobs run again without waiting for the manager); {@link Duration#ZERO}
 *                            turns it off (default 5 s). The expiry of unclaimed jobs and the dead-job
 *                            retention are run by the elected manager ({@code docs/maintenance.md}), and
 *                            {@link QueueAdmin#maintain()} runs all three now
 * @param wakeups             use LISTEN/NOTIFY wake-ups on enqueue (default true)
 * @param prefetch            jobs the worker may hold claimed beyond its running handlers, so that one claim
 *                            round trip fetches a batch and a finishing handler finds its next job waiting
 *                            (default 0: claim only for free slots; 0 to 1000). A prefetched job's claim
 *                            runs (and is heart-beaten) while it waits; {@link Worker#close()} gives
 *                            prefetched jobs back at once, uncounted
 */
public record WorkOptions(int concurrency, Executor executor, Duration pollInterval, Duration idleCheck,
                          Duration shutdownTimeout, Duration maintenanceInterval, boolean wakeups, int prefetch) {

    /** Checks every field ({@link ErrorCode#INVALID_QUEUE_OPTIONS}). */
    public WorkOptions {
        if (concurrency < 1 || concurrency > 10_000) {
            throw invalid("concurrency must be between 1 and 10000 (got " + concurrency + ")");
        }
        if (pollInterval == null || pollInterval.compareTo(Duration.ofMillis(10)) < 0) {
            throw invalid("pollInterval must be at least 10 ms (got " + pollInterval + ")");
        }
        if (idleCheck == null || idleCheck.compareTo(Duration.ofMillis(10)) < 0) {
            throw invalid("idleCheck must be at least 10 ms (got " + idleCheck + ")");
        }
        if (shutdownTimeout == null || shutdownTimeout.isNegative()) {
            throw invalid("shutdownTimeout must not be negative (got " + shutdownTimeout + ")");
        }
        if (maintenanceInterval == null || maintenanceInterval.isNegative()
                || (!maintenanceInterval.isZero() && maintenanceInterval.compareTo(Duration.ofMillis(10)) < 0)) {
            throw invalid("maintenanceInterval must be zero (off) or at least 10 ms (got " + maintenanceInterval + ")");
        }
        if (prefetch < 0 || prefetch > 1000) {
            throw invalid("prefetch must be between 0 and 1000 (got " + prefetch + ")");
        }
    }

    /** Options without prefetch (the form before {@code prefetch} existed). */
    public WorkOptions(int concurrency, Executor executor, Duration pollInterval, Duration idleCheck,
                       Duration shutdownTimeout, Duration maintenanceInterval, boolean wakeups) {
        this(concurrency, executor, pollInterval, idleCheck, shutdownTimeout, maintenanceInterval, wakeups, 0);
    }

    private static SluiceException invalid(String problem) {
        return new SluiceException(ErrorCode.INVALID_QUEUE_OPTIONS, problem);
    }

    /**
     * Concurrency 8, the client's shared handler threads, 1 s fallback poll, 30 s idle check, 30 s shutdown, 5 s maintenance, wake-ups
     * on, no prefetch.
     */
    public static WorkOptions defaults() {
        return new WorkOptions(8, null, Duration.ofSeconds(1), Duration.ofSeconds(30), Duration.ofSeconds(30),
                Duration.ofSeconds(5), true, 0);
    }

    /** These options with another concurrency. */
    public WorkOptions withConcurrency(int n) {
        return new WorkOptions(n, executor, pollInterval, idleCheck, shutdownTimeout, maintenanceInterval, wakeups, prefetch);
    }

    /** These options with another executor ({@code null}: the client's shared handler threads). */
    public WorkOptions withExecutor(Executor e) {
        return new WorkOptions(concurrency, e, pollInterval, idleCheck, shutdownTimeout, maintenanceInterval, wakeups, prefetch);
    }

    /** These options with another fallback poll interval. */
    public WorkOptions withPollInterval(Duration d) {
        return new WorkOptions(concurrency, executor, Objects.requireNonNull(d, "pollInterval"), idleCheck, shutdownTimeout,
                maintenanceInterval, wakeups, prefetch);
    }

    /** These options with another idle check. */
    public WorkOptions withIdleCheck(Duration d) {
        return new WorkOptions(concurrency, executor, pollInterval, Objects.requireNonNull(d, "idleCheck"), shutdownTimeout,
                maintenanceInterval, wakeups, prefetch);
    }

    /** These options with another shutdown timeout. */
    public WorkOptions withShutdownTimeout(Duration d) {
        return new WorkOptions(concurrency, executor, pollInterval, idleCheck, Objects.requireNonNull(d, "shutdownTimeout"),
                maintenanceInterval, wakeups, prefetch);
    }

    /** These options with another maintenance interval ({@link Duration#ZERO}: off). */
    public WorkOptions withMaintenanceInterval(Duration d) {
        return new WorkOptions(concurrency, executor, pollInterval, idleCheck, shutdownTimeout,
                Objects.requireNonNull(d, "maintenanceInterval"), wakeups, prefetch);
    }

    /** These options with wake-ups on or off. */
    public WorkOptions withWakeups(boolean on) {
        return new WorkOptions(concurrency, executor, pollInterval, idleCheck, shutdownTimeout, maintenanceInterval, on, prefetch);
    }

    /** These options with another prefetch (jobs held claimed beyond the running handlers). */
    public WorkOptions withPrefetch(int n) {
        return new WorkOptions(concurrency, executor, pollInterval, idleCheck, shutdownTimeout, maintenanceInterval, wakeups, n);
    }
}
