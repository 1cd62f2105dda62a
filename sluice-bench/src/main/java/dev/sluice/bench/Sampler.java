package dev.sluice.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Samples in-process counters at a fixed rate from a phase's start (every 500 ms in e2e and fanout),
 * so that rates come from counter differences across the measured window and the backlog's trend
 * from a regression over every sample in it. Reading counters costs nothing on the database, so the
 * sampler does not disturb what it measures.
 */
final class Sampler implements AutoCloseable {
    /** One sample: when (monotonic nanos) and the counters' values then. */
    record Sample(long nanos, long[] values) {
    }

    private final ScheduledExecutorService timer;
    private final List<Sample> samples = new ArrayList<>();
    private final Supplier<long[]> source;

    private Sampler(long startNanos, Duration period, Supplier<long[]> source) {
        this.source = source;
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "bench-sampler");
            t.setDaemon(true);
            return t;
        });
        long periodNanos = period.toNanos();
        long delay = Math.max(0, startNanos - System.nanoTime());
        timer.scheduleAtFixedRate(this::sample, delay, periodNanos, TimeUnit.NANOSECONDS);
    }

    /** Starts sampling at {@code startNanos} (the phase's start) and every {@code period} after it. */
    static Sampler start(long startNanos, Duration period, Supplier<long[]> source) {
        return new Sampler(startNanos, period, source);
    }

    private void sample() {
        long[] v = source.get();
        long now = System.nanoTime();
        synchronized (samples) {
            samples.add(new Sample(now, v));
        }
    }

    /** Waits until a sample at or after {@code nanos} was taken (at most 5 s), so the window's end is covered. */
    void awaitSampleAfter(long nanos) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (System.nanoTime() < deadline) {
            synchronized (samples) {
                if (!samples.isEmpty() && samples.get(samples.size() - 1).nanos() >= nanos) {
                    return;
                }
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** The samples taken between {@code from} and {@code to} (monotonic nanos), with a quarter period of slack. */
    List<Sample> between(long from, long to, Duration period) {
        long slack = period.toNanos() / 4;
        synchronized (samples) {
            return samples.stream().filter(s -> s.nanos() >= from - slack && s.nanos() <= to + slack).toList();
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }

    /** Counter {@code index} per second between the first and the last sample. */
    static double rate(List<Sample> samples, int index) {
        if (samples.size() < 2) {
            return Double.NaN;
        }
        Sample a = samples.get(0);
        Sample b = samples.get(samples.size() - 1);
        return (b.values()[index] - a.values()[index]) / ((b.nanos() - a.nanos()) / 1e9);
    }

    /**
     * The least-squares slope, per second, of {@code values[minuend] - values[subtrahend]} over the
     * samples: how fast the backlog between a producer and a consumer grows (positive) or shrinks.
     */
    static double slope(List<Sample> samples, int minuend, int subtrahend) {
        int n = samples.size();
        if (n < 2) {
            return Double.NaN;
        }
        long t0 = samples.get(0).nanos();
        double sx = 0;
        double sy = 0;
        for (Sample s : samples) {
            sx += (s.nanos() - t0) / 1e9;
            sy += s.values()[minuend] - s.values()[subtrahend];
        }
        double mx = sx / n;
        double my = sy / n;
        double sxy = 0;
        double sxx = 0;
        for (Sample s : samples) {
            double dx = (s.nanos() - t0) / 1e9 - mx;
            sxy += dx * (s.values()[minuend] - s.values()[subtrahend] - my);
            sxx += dx * dx;
        }
        return sxx == 0 ? Double.NaN : sxy / sxx;
    }
}
