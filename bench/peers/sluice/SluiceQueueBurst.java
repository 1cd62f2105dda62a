import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.NewJob;
import dev.sluice.Queue;
import dev.sluice.Sluice;
import dev.sluice.WorkOptions;
import dev.sluice.Worker;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Sluice's job queue in bench/peers (a single-file program: {@code java -cp sluice.jar SluiceQueueBurst.java
 * JDBC_URL ...}), system {@code sluice-queue}: the same work as the peers' queues.
 *
 * <p>(0) warm-up, not measured: {@code --warmup-jobs} jobs enqueued and drained the same way (every driver
 * does this, so each system is measured warmed up); (1) enqueue N no-op jobs with 1 KB payloads through {@code Queue.enqueueBatch} (batches of
 * {@code --enqueue-batch}, {@code --enqueue-callers} threads, nobody working); (2) drain them with one
 * {@code queue.work} worker, concurrency {@code --workers} and prefetch 2 × {@code --fetch} (so each claim
 * takes about one fetch), a no-op handler, on a HikariCP pool of workers + 2 connections; the drain ends
 * when the queue is empty in the database (every ack written); (3) pickup latency at light load:
 * {@code --latency-jobs} single {@code enqueue()} calls at {@code --latency-rate}/s with the worker idle,
 * enqueue-return → handler-start on this process's monotonic clock. Queue wake-ups are LISTEN/NOTIFY
 * hints, so (3) is what another process's enqueue sees as well.
 *
 * <p>Prints one line {@code PEERS_RESULT {json}} for bench/peers/run.sh.
 */
public final class SluiceQueueBurst {
    static String url;
    static int jobs = 100_000;
    static int enqueueBatch = 1000;
    static int enqueueCallers = 4;
    static int workers = 8;
    static int fetch = 256;
    static int latencyJobs = 200;
    static int latencyRate = 20;
    static int warmupJobs = 100_000;
    static String schema = "peers_sluice_queue";

    public static void main(String[] args) throws Exception {
        parse(args);
        PGSimpleDataSource simple = new PGSimpleDataSource();
        simple.setUrl(url);
        HikariConfig hc = new HikariConfig();
        hc.setDataSource(simple);
        hc.setPoolName("peers-sluice-queue");
        hc.setMaximumPoolSize(workers + 2);
        hc.setMinimumIdle(workers + 2);
        byte[] pad = new byte[1024];
        ThreadLocalRandom.current().nextBytes(pad);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        try (HikariDataSource pool = new HikariDataSource(hc);
             Connection admin = simple.getConnection();
             Sluice sluice = Sluice.builder().dataSource(pool).schema(schema).allowDestroy(true)
                     .clientId("peers-sluice-queue").build()) {
            sluice.system().register();
            Queue<byte[]> queue = sluice.queue("peers");

            WorkOptions options = WorkOptions.defaults().withConcurrency(workers).withPrefetch(2 * fetch);
            if (warmupJobs > 0) {
                // Not measured: the same enqueue and drain, so the JIT has compiled the hot paths (every driver does this).
                log("sluice-queue: warm-up, " + warmupJobs + " jobs");
                enqueueRange(queue, pad, -warmupJobs, 0);
                AtomicLong warm = new AtomicLong();
                try (Worker w = queue.work(job -> warm.incrementAndGet(), options)) {
                    waitUntil(() -> warm.get() >= warmupJobs, TimeUnit.MINUTES.toNanos(10), 5);
                    waitUntil(() -> live(admin) == 0, TimeUnit.SECONDS.toNanos(60), 5);
                }
                settle(simple, schema);
            }

            log("sluice-queue: enqueue " + jobs + " jobs, enqueueBatch x" + enqueueBatch + ", " + enqueueCallers + " callers");
            long t0 = System.nanoTime();
            enqueueRange(queue, pad, 0, jobs);
            double enqueuePerS = jobs / ((System.nanoTime() - t0) / 1e9);
            log(String.format("enqueue: %.0f jobs/s", enqueuePerS));

            settle(simple, schema);
            AtomicIntegerArray seen = new AtomicIntegerArray(jobs);
            AtomicLong handled = new AtomicLong();
            AtomicLong duplicates = new AtomicLong();
            Map<Integer, Long> startedAt = new ConcurrentHashMap<>();
            log("drain with concurrency " + workers + ", prefetch " + (2 * fetch) + ", wake-ups " + options.wakeups());
            t0 = System.nanoTime();
            double drainPerS;
            long remaining;
            double[] lat;
            try (Worker worker = queue.work(job -> {
                long t = System.nanoTime();
                int seq = ByteBuffer.wrap(job.payload()).getInt(0);
                if (seq >= jobs) {
                    startedAt.putIfAbsent(seq, t);
                } else if (seen.getAndSet(seq, 1) == 0) {
                    handled.incrementAndGet();
                } else {
                    duplicates.incrementAndGet();
                }
            }, options)) {
                boolean handledAll = waitUntil(() -> handled.get() >= jobs, TimeUnit.MINUTES.toNanos(30), 1);
                long tHandled = System.nanoTime();
                // Handled is not done: the drain ends when every ack is written.
                waitUntil(() -> live(admin) == 0, TimeUnit.SECONDS.toNanos(60), 5);
                long tDone = System.nanoTime();
                remaining = live(admin);
                double drainS = (tDone - t0) / 1e9;
                drainPerS = handledAll && remaining == 0 ? jobs / drainS : Double.NaN;
                log(String.format("drain: %.0f jobs/s (handled all after %.2f s, acked after %.2f s)", jobs / drainS,
                        (tHandled - t0) / 1e9, drainS));

                settle(simple, schema);
                lat = pickup(queue, pad, startedAt, failure);
                log(String.format("pickup: p50 %.2f ms, p95 %.2f ms", lat[0], lat[1]));
            }
            System.out.println("PEERS_RESULT {"
                    + "\"system\":\"sluice-queue\""
                    + ",\"version\":" + json(System.getProperty("peers.sluice.version", "workspace"))
                    + ",\"enqueue_per_s\":" + num(enqueuePerS, 1)
                    + ",\"drain_per_s\":" + num(drainPerS, 1)
                    + ",\"p50_ms\":" + num(lat[0], 2)
                    + ",\"p95_ms\":" + num(lat[1], 2)
                    + ",\"jobs\":" + jobs
                    + ",\"handled\":" + handled.get()
                    + ",\"duplicates\":" + duplicates.get()
                    + ",\"remaining\":" + remaining
                    + ",\"latency_lost\":" + (long) lat[3]
                    + ",\"latency_early\":" + (long) lat[2]
                    + ",\"payload_bytes\":" + pad.length
                    + ",\"error\":" + (failure.get() == null ? "null" : json(failure.get().toString()))
                    + ",\"settings\":" + json("enqueueBatch x" + enqueueBatch + ", " + enqueueCallers
                    + " callers; work concurrency " + workers + ", prefetch " + (2 * fetch)
                    + ", LISTEN/NOTIFY wake-ups; HikariCP " + (workers + 2))
                    + "}");
        }
    }

    /** Enqueues the jobs with sequence numbers [from, to) through enqueueBatch, {@code enqueueCallers} threads. */
    static void enqueueRange(Queue<byte[]> queue, byte[] pad, int from, int to) throws Exception {
        AtomicInteger next = new AtomicInteger(from);
        ExecutorService callers = Executors.newFixedThreadPool(enqueueCallers);
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int c = 0; c < enqueueCallers; c++) {
                fs.add(callers.submit(() -> {
                    for (;;) {
                        int first = next.getAndAdd(enqueueBatch);
                        if (first >= to) {
                            return null;
                        }
                        int last = Math.min(to, first + enqueueBatch);
                        List<NewJob<byte[]>> batch = new ArrayList<>(last - first);
                        for (int q = first; q < last; q++) {
                            batch.add(NewJob.of(payload(pad, q)));
                        }
                        queue.enqueueBatch(batch);
                    }
                }));
            }
            for (Future<?> f : fs) {
                f.get();
            }
        } finally {
            callers.shutdown();
        }
    }

    /**
     * Live jobs left (pending or processing): the drain's end test, polled every 5 ms. One plain count of the
     * job table on one admin connection, as the Node drivers count their peers' job tables (queue.stats()
     * counts four things and would make the end test slower than theirs).
     */
    static long live(Connection admin) {
        try (Statement st = admin.createStatement();
             ResultSet rs = st.executeQuery("SELECT count(*) FROM " + schema + ".job")) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new IllegalStateException("counting the live jobs failed: " + e.getMessage(), e);
        }
    }

    /** Single enqueue() calls at a fixed rate: {p50, p95, early, lost}. */
    static double[] pickup(Queue<byte[]> queue, byte[] pad, Map<Integer, Long> startedAt, AtomicReference<Throwable> failure)
            throws Exception {
        Map<Integer, Long> committedAt = new ConcurrentHashMap<>();
        ExecutorService senders = Executors.newCachedThreadPool();
        long interval = TimeUnit.SECONDS.toNanos(1) / latencyRate;
        long t0 = System.nanoTime();
        List<Future<?>> fs = new ArrayList<>();
        for (int i = 0; i < latencyJobs; i++) {
            long due = t0 + i * interval;
            while (System.nanoTime() < due) {
                LockSupport.parkNanos(due - System.nanoTime());
            }
            int seq = jobs + i;
            fs.add(senders.submit(() -> {
                try {
                    queue.enqueue(payload(pad, seq));
                    committedAt.put(seq, System.nanoTime());
                } catch (RuntimeException e) {
                    failure.compareAndSet(null, e);
                }
            }));
        }
        for (Future<?> f : fs) {
            f.get();
        }
        senders.shutdown();
        waitUntil(() -> startedAt.keySet().containsAll(committedAt.keySet()), TimeUnit.SECONDS.toNanos(30), 10);
        List<Double> ms = new ArrayList<>();
        long early = 0;
        long lost = 0;
        for (Map.Entry<Integer, Long> e : committedAt.entrySet()) {
            Long s = startedAt.get(e.getKey());
            if (s == null) {
                lost++;
                continue;
            }
            long d = s - e.getValue();
            if (d < 0) {
                early++;
                d = 0;
            }
            ms.add(d / 1e6);
        }
        double[] sorted = ms.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return new double[] {quantile(sorted, 0.5), quantile(sorted, 0.95), early, lost};
    }

    static byte[] payload(byte[] pad, int seq) {
        byte[] b = Arrays.copyOf(pad, pad.length);
        ByteBuffer.wrap(b).putInt(0, seq);
        return b;
    }

    static double quantile(double[] sorted, double q) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int rank = (int) Math.ceil(q * sorted.length);
        return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
    }

    static boolean waitUntil(BooleanSupplier done, long timeoutNanos, long stepMillis) {
        long deadline = System.nanoTime() + timeoutNanos;
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(stepMillis));
        }
        return true;
    }

    /** The same settle step as every driver: VACUUM (ANALYZE) the system's own tables, then CHECKPOINT. */
    static void settle(PGSimpleDataSource ds, String schema) {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            List<String> tables = new ArrayList<>();
            try (ResultSet rs = s.executeQuery("SELECT format('%I.%I', schemaname, relname) FROM pg_stat_user_tables "
                    + "WHERE schemaname = '" + schema + "'")) {
                while (rs.next()) {
                    tables.add(rs.getString(1));
                }
            }
            for (String t : tables) {
                s.execute("VACUUM (ANALYZE) " + t);
            }
            try {
                s.execute("CHECKPOINT");
            } catch (SQLException e) {
                // not allowed for this role: measure anyway
            }
        } catch (SQLException e) {
            throw new IllegalStateException("settle (VACUUM ANALYZE of " + schema + ") failed: " + e.getMessage(), e);
        }
    }

    static String num(double v, int decimals) {
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            return "null";
        }
        double f = Math.pow(10, decimals);
        return Double.toString(Math.round(v * f) / f);
    }

    static String json(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n") + "\"";
    }

    static void log(String line) {
        System.err.println("[" + java.time.Instant.now() + "] " + line);
    }

    static void parse(String[] args) {
        if (args.length < 1 || args[0].startsWith("--")) {
            throw new IllegalArgumentException("usage: SluiceQueueBurst.java JDBC_URL [--jobs N] [--enqueue-batch N] "
                    + "[--enqueue-callers N] [--workers N] [--fetch N] [--latency-jobs N] [--latency-rate N] [--warmup-jobs N] [--schema S]");
        }
        url = args[0];
        for (int i = 1; i < args.length; i++) {
            String a = args[i];
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException("missing value for " + a);
            }
            String v = args[++i];
            switch (a) {
                case "--jobs" -> jobs = Integer.parseInt(v);
                case "--enqueue-batch" -> enqueueBatch = Integer.parseInt(v);
                case "--enqueue-callers" -> enqueueCallers = Integer.parseInt(v);
                case "--workers" -> workers = Integer.parseInt(v);
                case "--fetch" -> fetch = Integer.parseInt(v);
                case "--latency-jobs" -> latencyJobs = Integer.parseInt(v);
                case "--latency-rate" -> latencyRate = Integer.parseInt(v);
                case "--warmup-jobs" -> warmupJobs = Integer.parseInt(v);
                case "--schema" -> schema = v;
                default -> throw new IllegalArgumentException("unknown option " + a);
            }
        }
    }
}
