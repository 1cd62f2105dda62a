import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.ConsumeOptions;
import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.GroupConfig;
import dev.sluice.GroupInfo;
import dev.sluice.Outcome;
import dev.sluice.Outgoing;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.Stream;
import dev.sluice.StreamConfig;
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
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Sluice's side of bench/peers (a single-file program: {@code java -cp sluice.jar SluiceBurst.java JDBC_URL ...}).
 *
 * <p>The same work as every peer: (0) warm-up, not measured: {@code --warmup-jobs} messages produced and
 * drained the same way; (1) produce N no-op messages with 1 KB payloads through
 * {@code Producer.produceBatch} (batches of {@code --enqueue-batch}, {@code --enqueue-callers} threads,
 * nobody consuming); (2) drain them with one consumer group, {@code withConcurrency(workers)} and
 * {@code withBatchSize(fetch)}, a no-op handler, on a HikariCP pool of workers + 2 connections; the
 * drain ends when the group's cursor has committed the head; (3) pickup latency at light load:
 * {@code --latency-jobs} single {@code produce()} calls at {@code --latency-rate}/s with the consumer
 * idle, produce-return → handler-start on this process's monotonic clock; the producer shares the
 * consumer's client, so its commit wakes the consumer in-process (like db-scheduler's immediate
 * execution); (4) the same with the producer on a second client, so the consumer learns of each
 * message only through LISTEN/NOTIFY — what a message produced by another process sees
 * ({@code p50_no_hint_ms}).
 *
 * <p>Prints one line {@code PEERS_RESULT {json}} for bench/peers/run.sh.
 */
public final class SluiceBurst {
    static String url;
    static int jobs = 100_000;
    static int enqueueBatch = 1000;
    static int enqueueCallers = 4;
    static int workers = 8;
    static int fetch = 256;
    static int latencyJobs = 200;
    static int latencyRate = 20;
    static String schema = "peers_sluice";
    static int drainTimeoutS = 1800;
    static int warmupJobs = 100_000;

    public static void main(String[] args) throws Exception {
        parse(args);
        PGSimpleDataSource simple = new PGSimpleDataSource();
        simple.setUrl(url);
        HikariConfig hc = new HikariConfig();
        hc.setDataSource(simple);
        hc.setPoolName("peers-sluice");
        // The connection budget every system gets: the workers plus two.
        hc.setMaximumPoolSize(workers + 2);
        hc.setMinimumIdle(workers + 2);
        byte[] pad = new byte[1024];
        ThreadLocalRandom.current().nextBytes(pad);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        try (HikariDataSource pool = new HikariDataSource(hc);
             Sluice sluice = Sluice.builder().dataSource(pool).schema(schema).allowDestroy(true)
                     .clientId("peers-sluice").build()) {
            Stream<byte[]> stream = sluice.stream("peers");
            stream.register(StreamConfig.defaults());
            ConsumerGroup<byte[]> group = stream.consumerGroup("g");
            group.register(GroupConfig.defaults());

            ConsumeOptions options = ConsumeOptions.defaults().withConcurrency(workers).withBatchSize(fetch);
            if (warmupJobs > 0) {
                // Not measured: the same produce and drain, so the JIT has compiled the hot paths (every driver does this).
                log("sluice: warm-up, " + warmupJobs + " messages");
                produceRange(stream, pad, -warmupJobs, 0);
                AtomicLong warm = new AtomicLong();
                try (Consumption c = group.consume(m -> {
                    warm.incrementAndGet();
                    return Outcome.success();
                }, options)) {
                    waitUntil(() -> warm.get() >= warmupJobs, TimeUnit.SECONDS.toNanos(drainTimeoutS), 5);
                    waitUntil(() -> lag(group) == 0, TimeUnit.SECONDS.toNanos(60), 5);
                }
                settle(simple, schema);
            }

            // Phase 1: produce with nobody consuming.
            checkpoint(simple);
            log("sluice: produce " + jobs + " messages, produceBatch x" + enqueueBatch + ", " + enqueueCallers + " callers");
            long p0 = System.nanoTime();
            produceRange(stream, pad, 0, jobs);
            double enqueuePerS = jobs / ((System.nanoTime() - p0) / 1e9);
            log(String.format("enqueue: %.0f msgs/s", enqueuePerS));

            // Phase 2: drain.
            settle(simple, schema);
            AtomicIntegerArray seen = new AtomicIntegerArray(jobs);
            AtomicLong handled = new AtomicLong();
            AtomicLong duplicates = new AtomicLong();
            Map<Integer, Long> startedAt = new ConcurrentHashMap<>();
            log("drain with concurrency " + workers + ", batchSize " + fetch + ", wake-ups " + options.wakeups());
            long t0 = System.nanoTime();
            double drainPerS;
            long remaining;
            Latency lat;
            Latency remote;
            try (Consumption consumption = group.consume(m -> {
                long t = System.nanoTime();
                int seq = ByteBuffer.wrap(m.payload()).getInt(0);
                if (seq >= jobs) {
                    startedAt.putIfAbsent(seq, t);
                } else if (seen.getAndSet(seq, 1) == 0) {
                    handled.incrementAndGet();
                } else {
                    duplicates.incrementAndGet();
                }
                return Outcome.success();
            }, options)) {
                boolean handledAll = waitUntil(() -> handled.get() >= jobs, TimeUnit.SECONDS.toNanos(drainTimeoutS), 1);
                long tHandled = System.nanoTime();
                // Handled is not done: the drain ends when the group committed every message.
                waitUntil(() -> lag(group) == 0, TimeUnit.SECONDS.toNanos(60), 5);
                long tDone = System.nanoTime();
                remaining = lag(group);
                double drainS = (tDone - t0) / 1e9;
                drainPerS = handledAll && remaining == 0 ? jobs / drainS : Double.NaN;
                log(String.format("drain: %.0f msgs/s (handled all after %.2f s, committed after %.2f s)", jobs / drainS,
                        (tHandled - t0) / 1e9, drainS));

                // Phase 3: pickup latency with the consumer idle.
                settle(simple, schema);
                try (Producer<byte[]> producer = stream.producer()) {
                    lat = pickup(producer, pad, startedAt, failure, jobs);
                }
                log(String.format("pickup: p50 %.2f ms, p95 %.2f ms", lat.p50, lat.p95));
                // What a message produced by another process sees: a second client (its own session, so
                // no in-process wake-up) produces; the consumer learns of it only through LISTEN/NOTIFY.
                try (Sluice other = Sluice.builder().dataSource(pool).schema(schema).clientId("peers-sluice-other").build();
                     Producer<byte[]> producer = other.stream("peers").producer()) {
                    remote = pickup(producer, pad, startedAt, failure, jobs + latencyJobs);
                }
                log(String.format("pickup from another client (NOTIFY only): p50 %.2f ms, p95 %.2f ms", remote.p50, remote.p95));
            }
            System.out.println("PEERS_RESULT {"
                    + "\"system\":\"sluice\""
                    + ",\"version\":" + json(System.getProperty("peers.sluice.version", "workspace"))
                    + ",\"enqueue_per_s\":" + num(enqueuePerS, 1)
                    + ",\"drain_per_s\":" + num(drainPerS, 1)
                    + ",\"p50_ms\":" + num(lat.p50, 2)
                    + ",\"p95_ms\":" + num(lat.p95, 2)
                    + ",\"p50_no_hint_ms\":" + num(remote.p50, 2)
                    + ",\"p95_no_hint_ms\":" + num(remote.p95, 2)
                    + ",\"jobs\":" + jobs
                    + ",\"handled\":" + handled.get()
                    + ",\"duplicates\":" + duplicates.get()
                    + ",\"remaining\":" + remaining
                    + ",\"latency_lost\":" + (lat.lost + remote.lost)
                    + ",\"latency_early\":" + (lat.early + remote.early)
                    + ",\"payload_bytes\":" + pad.length
                    + ",\"error\":" + (failure.get() == null ? "null" : json(failure.get().toString()))
                    + ",\"settings\":" + json("produceBatch x" + enqueueBatch + ", " + enqueueCallers
                    + " callers; consume concurrency " + workers + ", batchSize " + fetch
                    + ", LISTEN/NOTIFY wake-ups; HikariCP " + (workers + 2))
                    + "}");
        }
    }

    /** Produces messages with sequence numbers [from, to) through produceBatch, {@code enqueueCallers} threads. */
    static void produceRange(Stream<byte[]> stream, byte[] pad, int from, int to) throws Exception {
        try (Producer<byte[]> producer = stream.producer()) {
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
                            List<Outgoing<byte[]>> batch = new ArrayList<>(last - first);
                            for (int q = first; q < last; q++) {
                                batch.add(Outgoing.of(payload(pad, q)));
                            }
                            producer.produceBatch(batch);
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
    }

    record Latency(double p50, double p95, long early, long lost) {
    }

    /** Single produce() calls at a fixed rate; each call's return is its commit. */
    static Latency pickup(Producer<byte[]> producer, byte[] pad, Map<Integer, Long> startedAt,
                          AtomicReference<Throwable> failure, int firstSeq) throws Exception {
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
            int seq = firstSeq + i;
            fs.add(senders.submit(() -> {
                try {
                    producer.produce(payload(pad, seq));
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
        return new Latency(quantile(sorted, 0.5), quantile(sorted, 0.95), early, lost);
    }

    static long lag(ConsumerGroup<byte[]> group) {
        return group.get().map(GroupInfo::lag).orElse(-1L);
    }

    /** The payload of message {@code seq}: 1 KB of random bytes (drawn once) with seq in the first 4. */
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

    /**
     * The settle step before the drain and before the pickup phase, the same for every system (the Node
     * drivers do the same): VACUUM (ANALYZE) every table of the system's own schema, then CHECKPOINT, so no
     * figure depends on when autovacuum happened to run.
     */
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
        } catch (SQLException e) {
            throw new IllegalStateException("settle (VACUUM ANALYZE of " + schema + ") failed: " + e.getMessage(), e);
        }
        checkpoint(ds);
    }

    static void checkpoint(PGSimpleDataSource ds) {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("CHECKPOINT");
        } catch (SQLException e) {
            // not allowed for this role: measure anyway
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
        StringBuilder b = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            switch (ch) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                default -> {
                    if (ch < 0x20) {
                        b.append(String.format("\\u%04x", (int) ch));
                    } else {
                        b.append(ch);
                    }
                }
            }
        }
        return b.append('"').toString();
    }

    static void log(String line) {
        System.err.println("[" + java.time.Instant.now() + "] " + line);
    }

    static void parse(String[] args) {
        if (args.length < 1 || args[0].startsWith("--")) {
            throw new IllegalArgumentException("usage: SluiceBurst.java JDBC_URL [--jobs N] [--enqueue-batch N] "
                    + "[--enqueue-callers N] [--workers N] [--fetch N] [--latency-jobs N] [--latency-rate N] [--warmup-jobs N] [--schema S]");
        }
        url = args[0];
        for (int i = 1; i < args.length; i++) {
            String a = args[i];
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(a + " needs a value");
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
                case "--schema" -> schema = v;
                case "--drain-timeout-s" -> drainTimeoutS = Integer.parseInt(v);
                case "--warmup-jobs" -> warmupJobs = Integer.parseInt(v);
                default -> throw new IllegalArgumentException("unknown argument " + a);
            }
        }
    }
}
