package dev.sluice.bench;

import dev.sluice.NewJob;
import dev.sluice.Queue;
import dev.sluice.QueueOptions;
import dev.sluice.bench.QueueBenchmark.Options;
import java.nio.ByteBuffer;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * The enqueue phase of {@link QueueBenchmark}: N jobs through {@link Queue#enqueueBatch} in batches of E
 * from K caller threads, and the {@code raw-insert} reference writing the same rows into a plain table
 * with the job table's columns. Job {@code seq} carries its number in the first four payload bytes, so
 * that the drain can count handler calls per job.
 */
final class QueueEnqueue {
    private QueueEnqueue() {
    }

    /** The payload of job {@code seq}: its number in the first four bytes, random bytes after. */
    static byte[] payload(byte[] pad, int seq) {
        byte[] p = pad.clone();
        ByteBuffer.wrap(p).putInt(0, seq);
        return p;
    }

    /** Ours: jobs per second through {@code enqueueBatch}, first call to last return. */
    static double ours(Queue<byte[]> queue, Options o) {
        byte[] pad = Bench.randomBytes(o.payloadBytes());
        java.util.concurrent.atomic.AtomicInteger next = new java.util.concurrent.atomic.AtomicInteger();
        long t0 = System.nanoTime();
        Bench.runThreads(o.enqueueCallers(), "bench-enqueue-", i -> {
            for (int from = next.getAndAdd(o.enqueueBatch()); from < o.jobs(); from = next.getAndAdd(o.enqueueBatch())) {
                int to = Math.min(o.jobs(), from + o.enqueueBatch());
                List<NewJob<byte[]>> jobs = new ArrayList<>(to - from);
                for (int seq = from; seq < to; seq++) {
                    jobs.add(NewJob.of(payload(pad, seq)));
                }
                queue.enqueueBatch(jobs);
            }
        });
        return o.jobs() / ((System.nanoTime() - t0) / 1e9);
    }

    /**
     * raw-insert: the values Sluice writes for a job without options (queue, payload, content type and
     * the stamped queue options; ids, state, run_at and timestamps from the defaults).
     */
    static double raw(DataSource ds, String raw, String queue, QueueOptions qo, Options o) {
        String insert = "INSERT INTO " + raw + " (queue, payload, content_type, visibility_timeout_ns, max_attempts,"
                + " backoff_base_ns, backoff_max_ns, dead_letter_retention_ns)"
                + " SELECT ?, p, ?, ?, ?, ?, ?, ? FROM unnest(?::bytea[]) AS u(p)";
        byte[] pad = Bench.randomBytes(o.payloadBytes());
        java.util.concurrent.atomic.AtomicInteger next = new java.util.concurrent.atomic.AtomicInteger();
        long t0 = System.nanoTime();
        Bench.runThreads(o.enqueueCallers(), "bench-raw-insert-", i -> {
            try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(insert)) {
                c.setAutoCommit(true);
                ps.setString(1, queue);
                ps.setString(2, Bench.CONTENT_TYPE);
                ps.setLong(3, qo.visibilityTimeout().toNanos());
                ps.setInt(4, qo.maxAttempts());
                ps.setLong(5, qo.backoffBase().toNanos());
                ps.setLong(6, qo.maxBackoff().toNanos());
                ps.setLong(7, qo.deadLetterRetention().toNanos());
                for (int from = next.getAndAdd(o.enqueueBatch()); from < o.jobs(); from = next.getAndAdd(o.enqueueBatch())) {
                    int to = Math.min(o.jobs(), from + o.enqueueBatch());
                    byte[][] rows = new byte[to - from][];
                    for (int seq = from; seq < to; seq++) {
                        rows[seq - from] = payload(pad, seq);
                    }
                    Array a = c.createArrayOf("bytea", rows);
                    ps.setArray(8, a);
                    int n = ps.executeUpdate();
                    a.free();
                    if (n != rows.length) {
                        throw new BenchmarkException("raw-insert wrote " + n + " rows instead of " + rows.length);
                    }
                }
            }
        });
        return o.jobs() / ((System.nanoTime() - t0) / 1e9);
    }
}
