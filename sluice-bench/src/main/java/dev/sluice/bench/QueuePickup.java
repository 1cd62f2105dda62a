package dev.sluice.bench;

import dev.sluice.Queue;
import dev.sluice.WorkOptions;
import dev.sluice.Worker;
import dev.sluice.bench.QueueBenchmark.Options;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The pickup phase of {@link QueueBenchmark}: P single enqueues at R per second with an idle worker;
 * each job carries its number and its enqueue call start, and the handler notes the latency.
 */
final class QueuePickup {
    private QueuePickup() {
    }

    /** Latencies in ms of the pickup jobs that were handled (enqueue call start → handler start). */
    static double[] measure(Queue<byte[]> queue, Options o) {
        double[] lat = new double[o.pickupJobs()];
        AtomicLong handled = new AtomicLong();
        byte[] pad = Bench.randomBytes(o.payloadBytes());
        WorkOptions wo = WorkOptions.defaults().withConcurrency(o.workers()).withPrefetch(o.batch());
        try (Worker w = queue.work(h -> {
            long now = System.nanoTime();
            ByteBuffer b = ByteBuffer.wrap(h.payload());
            int seq = b.getInt(0);
            lat[seq] = (now - b.getLong(4)) / 1e6;
            handled.incrementAndGet();
        }, wo)) {
            // Let the worker reach its idle sleep before the first job.
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(500));
            long period = TimeUnit.SECONDS.toNanos(1) / o.pickupRate();
            long next = System.nanoTime();
            for (int seq = 0; seq < o.pickupJobs(); seq++) {
                LockSupport.parkNanos(next - System.nanoTime());
                next += period;
                byte[] p = pad.clone();
                long start = System.nanoTime();
                ByteBuffer.wrap(p).putInt(0, seq).putLong(4, start);
                queue.enqueue(p);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (handled.get() < o.pickupJobs() && System.nanoTime() < deadline) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
            }
        }
        int n = (int) Math.min(handled.get(), o.pickupJobs());
        return n == lat.length ? lat : Arrays.copyOf(Arrays.stream(lat).filter(v -> v > 0).toArray(), n);
    }
}
