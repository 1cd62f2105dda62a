package dev.sluice.spring;

import dev.sluice.MetricSnapshot;
import dev.sluice.MigrationStatus;
import dev.sluice.Sluice;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The database reads of the health indicator and the info contributor, bounded in time: they run on one daemon
 * thread of the probe's (started on first use, never more than one), and a caller waits at most the timeout. While
 * one probe is still running (a pool waiting for a dead database can hold it for its connection timeout), later
 * callers wait for that same one instead of queueing more.
 */
public class SluiceProbe implements AutoCloseable {
    /** What one probe saw. */
    public record Result(List<MigrationStatus> migrations, List<MetricSnapshot> metrics) {
    }

    private final Sluice sluice;
    private final Duration timeout;
    private ExecutorService executor;
    private CompletableFuture<Result> inFlight;

    /** A probe of {@code sluice} whose callers wait at most {@code timeout}. */
    public SluiceProbe(Sluice sluice, Duration timeout) {
        this.sluice = sluice;
        this.timeout = timeout;
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new dev.sluice.SluiceException(dev.sluice.ErrorCode.INVALID_CONFIG,
                    "sluice.health.timeout must be positive (got " + timeout + ")");
        }
    }

    /**
     * Reads the migration status and the newest metric snapshots.
     *
     * @throws TimeoutException when the database did not answer within the timeout
     * @throws ExecutionException with what the reads threw
     */
    public Result probe() throws TimeoutException, ExecutionException, InterruptedException {
        CompletableFuture<Result> f;
        synchronized (this) {
            if (inFlight == null || inFlight.isDone()) {
                if (executor == null) {
                    executor = Executors.newSingleThreadExecutor(r -> {
                        Thread t = new Thread(r, "sluice-health-probe");
                        t.setDaemon(true);
                        return t;
                    });
                }
                inFlight = CompletableFuture.supplyAsync(() -> new Result(sluice.migrations().status(),
                        sluice.maintenance().metrics()), executor);
            }
            f = inFlight;
        }
        return f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Stops the probe's thread (a read in progress is interrupted). */
    @Override
    public synchronized void close() {
        if (executor != null) {
            executor.shutdownNow();
        }
    }
}
