package dev.sluice.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One timed phase of a benchmark: a warm-up (not counted) followed by the measured window, on the
 * monotonic clock, shared by every worker thread of the phase. A worker counts an operation when it
 * <em>completes</em> inside the window; operations straddling an edge are rare next to a window of
 * seconds, and they fall the same way for our side and the reference.
 */
final class Phase {
    /** The body of one worker thread; {@code index} tells the workers apart. */
    interface Worker {
        void run(int index) throws Exception;
    }

    private final long measureFromNanos;
    private final long endNanos;
    private final Duration measured;
    private final AtomicReference<Throwable> failure = new AtomicReference<>();

    private Phase(Duration warmup, Duration measured) {
        long now = System.nanoTime();
        this.measureFromNanos = now + warmup.toNanos();
        this.endNanos = measureFromNanos + measured.toNanos();
        this.measured = measured;
    }

    /** Starts the clock of a phase now. */
    static Phase start(Duration warmup, Duration measured) {
        return new Phase(warmup, measured);
    }

    /** Whether workers should start another operation (the window is not over and nobody failed). */
    boolean running() {
        return failure.get() == null && System.nanoTime() < endNanos;
    }

    /** Whether an operation that completed at {@code nanos} counts. */
    boolean measured(long nanos) {
        return nanos >= measureFromNanos && nanos < endNanos;
    }

    /** The length of the measured window in seconds. */
    double seconds() {
        return measured.toNanos() / 1e9;
    }

    /**
     * Runs {@code workers} threads of {@code body} until the window is over and waits for all of them.
     * The first failure stops the others and is rethrown: a benchmark that lost a worker has no figure.
     */
    void run(int workers, String threadName, Worker body) {
        List<Thread> threads = new ArrayList<>(workers);
        for (int i = 0; i < workers; i++) {
            int index = i;
            Thread t = new Thread(() -> {
                try {
                    body.run(index);
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, threadName + i);
            t.setDaemon(true);
            threads.add(t);
        }
        threads.forEach(Thread::start);
        boolean interrupted = false;
        for (Thread t : threads) {
            while (true) {
                try {
                    t.join();
                    break;
                } catch (InterruptedException e) {
                    // Keep waiting: the workers stop by themselves at the end of the window.
                    interrupted = true;
                    failure.compareAndSet(null, e);
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        Throwable f = failure.get();
        if (f != null) {
            throw new BenchmarkException("a worker of the benchmark failed: " + f, f);
        }
    }
}
