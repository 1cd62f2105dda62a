package dev.sluice.bench;

import dev.sluice.Queue;
import dev.sluice.WorkOptions;
import dev.sluice.Worker;
import dev.sluice.bench.QueueBenchmark.Options;
import java.nio.ByteBuffer;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;

/**
 * The drain phase of {@link QueueBenchmark}: our {@link Queue#work} worker with a no-op handler burning
 * down the enqueued jobs until the database shows the last one gone, and the {@code raw-skip-locked}
 * reference burning down its rows. Every handler call is counted per job (missing and duplicate jobs),
 * and this JVM's CPU seconds during each drain are taken as the client-side cost.
 */
final class QueueDrain {
    /** How long a drain may take before the run is a failure. */
    private static final Duration DRAIN_TIMEOUT = Duration.ofMinutes(10);

    private QueueDrain() {
    }

    /** A drain: its rate, what went wrong, and this JVM's CPU seconds during it (client-side cost). */
    record Drained(double perSecond, long missing, long duplicates, double clientCpuSeconds) {
    }

    /** CPU time of this JVM so far, in seconds (NaN where the platform does not say). */
    private static double processCpuSeconds() {
        if (java.lang.management.ManagementFactory.getOperatingSystemMXBean()
                instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getProcessCpuTime() / 1e9;
        }
        return Double.NaN;
    }

    /** Counts handler calls per job number. */
    private static final class Seen {
        final AtomicIntegerArray calls;
        final AtomicLong distinct = new AtomicLong();
        final AtomicLong duplicates = new AtomicLong();

        Seen(int jobs) {
            calls = new AtomicIntegerArray(jobs);
        }

        void add(byte[] payload) {
            int seq = ByteBuffer.wrap(payload).getInt(0);
            if (calls.getAndIncrement(seq) == 0) {
                distinct.incrementAndGet();
            } else {
                duplicates.incrementAndGet();
            }
        }
    }

    /** Ours: one worker (concurrency C, prefetch 2B) from its start until the table holds none of the queue's jobs. */
    static Drained ours(Queue<byte[]> queue, Connection admin, String job, Options o) throws SQLException {
        Seen seen = new Seen(o.jobs());
        // The worker claims when half its capacity (concurrency + prefetch) is free, with up to two claims in
        // flight: a prefetch of 2B makes its claims about B jobs each, the reference's batch size.
        WorkOptions wo = WorkOptions.defaults().withConcurrency(o.workers()).withPrefetch(Math.min(1000, 2 * o.batch()));
        long deadline = System.nanoTime() + DRAIN_TIMEOUT.toNanos();
        double cpu0 = processCpuSeconds();
        long t0 = System.nanoTime();
        long t1;
        long left;
        // The no-op handler reads the job, as the reference's does (payload() decodes, here without a copy).
        try (Worker w = queue.work(h -> seen.add(h.payload()), wo);
             PreparedStatement any = admin.prepareStatement("SELECT EXISTS (SELECT 1 FROM " + job + " WHERE queue = ?)")) {
            any.setString(1, queue.name());
            // Handlers first (no database load while they run), then the table until the last ack landed.
            while (seen.distinct.get() < o.jobs() && System.nanoTime() < deadline) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            }
            while (System.nanoTime() < deadline) {
                try (ResultSet rs = any.executeQuery()) {
                    rs.next();
                    if (!rs.getBoolean(1)) {
                        break;
                    }
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            }
            t1 = System.nanoTime();
        }
        double cpu = processCpuSeconds() - cpu0;
        left = Bench.queryLong(admin, "SELECT count(*) FROM " + job + " WHERE queue = " + literal(queue.name()));
        return new Drained(o.jobs() / ((t1 - t0) / 1e9), (o.jobs() - seen.distinct.get()) + left, seen.duplicates.get(), cpu);
    }

    /**
     * raw-skip-locked: each connection claims up to B due rows in claim order (state, claim expiry and
     * attempts set as a claim must), runs the no-op handler on each, and deletes them by id in a
     * second transaction; it stops when a claim finds nothing.
     */
    static Drained raw(DataSource ds, Connection admin, String raw, String queue, Options o)
            throws SQLException {
        String claim = "UPDATE " + raw + " SET state = 'processing', claimed_at = now(),"
                + " claim_expires_at = now() + (visibility_timeout_ns / 1000) * interval '1 microsecond',"
                + " attempts = attempts + 1"
                + " WHERE id IN (SELECT id FROM " + raw + " WHERE queue = ? AND state = 'pending' AND run_at <= now()"
                + " ORDER BY priority DESC, run_at, id LIMIT ? FOR UPDATE SKIP LOCKED) RETURNING id, payload";
        String delete = "DELETE FROM " + raw + " WHERE id = ANY(?)";
        Seen seen = new Seen(o.jobs());
        double cpu0 = processCpuSeconds();
        long t0 = System.nanoTime();
        Bench.runThreads(o.workers(), "bench-raw-skip-locked-", i -> {
            try (Connection c = ds.getConnection(); PreparedStatement cl = c.prepareStatement(claim);
                 PreparedStatement del = c.prepareStatement(delete)) {
                c.setAutoCommit(true);
                cl.setString(1, queue);
                cl.setInt(2, o.batch());
                while (true) {
                    List<Long> ids = new ArrayList<>(o.batch());
                    try (ResultSet rs = cl.executeQuery()) {
                        while (rs.next()) {
                            ids.add(rs.getLong(1));
                            seen.add(rs.getBytes(2));
                        }
                    }
                    if (ids.isEmpty()) {
                        return;
                    }
                    Array a = c.createArrayOf("int8", ids.toArray());
                    del.setArray(1, a);
                    del.executeUpdate();
                    a.free();
                }
            }
        });
        long t1 = System.nanoTime();
        double cpu = processCpuSeconds() - cpu0;
        long left = Bench.queryLong(admin, "SELECT count(*) FROM " + raw);
        return new Drained(o.jobs() / ((t1 - t0) / 1e9), (o.jobs() - seen.distinct.get()) + left, seen.duplicates.get(), cpu);
    }

    private static String literal(String s) {
        return "'" + s.replace("'", "''") + "'";
    }
}
