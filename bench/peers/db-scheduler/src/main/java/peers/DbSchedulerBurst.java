package peers;

import com.github.kagkarlsson.scheduler.Scheduler;
import com.github.kagkarlsson.scheduler.SchedulerClient;
import com.github.kagkarlsson.scheduler.task.TaskInstance;
import com.github.kagkarlsson.scheduler.task.helper.OneTimeTask;
import com.github.kagkarlsson.scheduler.task.helper.Tasks;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
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
 * db-scheduler driver of bench/peers: the same work as every system. (0) warm-up, not measured:
 * {@code --warmup-jobs} executions scheduled and drained the same way (every driver does this); (1) schedule N one-time task
 * executions, due now, with 1 KB of task data, through {@code SchedulerClient.scheduleBatch} (batches of
 * {@code --enqueue-batch}, {@code --enqueue-callers} threads, no scheduler running); (2) start a scheduler
 * with {@code threads(workers)} and a no-op task and wait until the table is empty (one-time
 * executions are deleted on completion); (3) pickup latency at light load: single {@code schedule(…, now)}
 * calls at {@code --latency-rate}/s with the scheduler idle, schedule-return → handler-start; and, reported
 * beside it, the same through a separate {@code SchedulerClient} (what a job scheduled by another process
 * sees: no in-process hint, found by the next poll).
 *
 * <p>Fastest documented settings: polling strategy {@code lock-and-fetch} (SELECT … FOR UPDATE SKIP
 * LOCKED; docs/performance.md: ~10k exec/s vs ~2-4k for the default {@code fetch}) with the limits of its
 * fastest published configuration (lower 4.0, upper 20.0 × threads), {@code enableImmediateExecution()}
 * (a schedule due now wakes the local scheduler at once; it has no LISTEN/NOTIFY), and a 100 ms polling
 * interval (db-scheduler documents no minimum; the default is 10 s).
 */
public final class DbSchedulerBurst {
    static String url;
    static int jobs = 100_000;
    static int enqueueBatch = 1000;
    static int enqueueCallers = 4;
    static int workers = 8;
    static int latencyJobs = 200;
    static int latencyRate = 20;
    static String schema = "peers_dbscheduler";
    static int drainTimeoutS = 1800;
    static int warmupJobs = 100_000;
    static double lowerLimit = 4.0;
    static double upperLimit = 20.0;
    static long pollingMillis = 100;

    public static void main(String[] args) throws Exception {
        parse(args);
        PGSimpleDataSource simple = new PGSimpleDataSource();
        simple.setUrl(url);
        String table = schema + ".scheduled_tasks";
        try (Connection c = simple.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
            s.execute("CREATE SCHEMA " + schema);
            // db-scheduler's documented PostgreSQL table (postgresql_tables.sql).
            s.execute("CREATE TABLE " + table + " (task_name text NOT NULL, task_instance text NOT NULL, task_data bytea, "
                    + "execution_time timestamptz NOT NULL, picked boolean NOT NULL, picked_by text, last_success timestamptz, "
                    + "last_failure timestamptz, consecutive_failures int, last_heartbeat timestamptz, version bigint NOT NULL, "
                    + "priority smallint, PRIMARY KEY (task_name, task_instance))");
            s.execute("CREATE INDEX execution_time_idx ON " + table + " (execution_time)");
            s.execute("CREATE INDEX last_heartbeat_idx ON " + table + " (last_heartbeat)");
            s.execute("CREATE INDEX priority_execution_time_idx ON " + table + " (priority DESC, execution_time ASC)");
        }
        HikariConfig hc = new HikariConfig();
        hc.setDataSource(simple);
        hc.setPoolName("peers-db-scheduler");
        // The connection budget every system gets: the workers plus two.
        hc.setMaximumPoolSize(workers + 2);
        hc.setMinimumIdle(workers + 2);
        byte[] pad = new byte[1024];
        ThreadLocalRandom.current().nextBytes(pad);

        AtomicIntegerArray seen = new AtomicIntegerArray(jobs);
        AtomicLong handled = new AtomicLong();
        AtomicLong duplicates = new AtomicLong();
        Map<Integer, Long> startedAt = new ConcurrentHashMap<>();
        AtomicLong warm = new AtomicLong();
        OneTimeTask<byte[]> task = Tasks.oneTime("peer", byte[].class).execute((inst, ctx) -> {
            long t = System.nanoTime();
            if (inst.getId().startsWith("w")) {
                warm.incrementAndGet();
                return;
            }
            int seq = Integer.parseInt(inst.getId());
            if (seq >= jobs) {
                startedAt.putIfAbsent(seq, t);
            } else if (seen.getAndSet(seq, 1) == 0) {
                handled.incrementAndGet();
            } else {
                duplicates.incrementAndGet();
            }
        });
        String version = Scheduler.class.getPackage().getImplementationVersion();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        try (HikariDataSource pool = new HikariDataSource(hc); Connection admin = simple.getConnection()) {
            SchedulerClient client = SchedulerClient.Builder.create(pool, task).tableName(table).build();
            if (warmupJobs > 0) {
                // Not measured: the same scheduling and drain, so the JIT has compiled the hot paths (every driver does this).
                log("db-scheduler: warm-up, " + warmupJobs + " executions");
                scheduleRange(client, task, pad, "w", 0, warmupJobs);
                Scheduler warmScheduler = scheduler(pool, task, table);
                warmScheduler.start();
                waitUntil(() -> warm.get() >= warmupJobs, TimeUnit.SECONDS.toNanos(drainTimeoutS), 5);
                waitUntil(() -> count(admin, table) == 0, TimeUnit.SECONDS.toNanos(60), 5);
                warmScheduler.stop();
                settle(simple, schema);
            }

            // Phase 1: schedule with no scheduler running.
            checkpoint(simple);
            log("db-scheduler: schedule " + jobs + " executions, scheduleBatch x" + enqueueBatch + ", " + enqueueCallers + " callers");
            long t0 = System.nanoTime();
            scheduleRange(client, task, pad, "", 0, jobs);
            double enqueuePerS = jobs / ((System.nanoTime() - t0) / 1e9);
            log(String.format("enqueue: %.0f executions/s", enqueuePerS));

            // Phase 2: drain.
            settle(simple, schema);
            Scheduler scheduler = scheduler(pool, task, table);
            log("drain with threads " + workers + ", lock-and-fetch " + lowerLimit + "/" + upperLimit + ", polling "
                    + pollingMillis + " ms, immediate execution");
            t0 = System.nanoTime();
            scheduler.start();
            boolean handledAll = waitUntil(() -> handled.get() >= jobs, TimeUnit.SECONDS.toNanos(drainTimeoutS), 1);
            long tHandled = System.nanoTime();
            // Handled is not done: the drain ends when every execution is deleted (completed).
            waitUntil(() -> count(admin, table) == 0, TimeUnit.SECONDS.toNanos(60), 5);
            long tDone = System.nanoTime();
            long remaining = count(admin, table);
            double drainS = (tDone - t0) / 1e9;
            double drainPerS = handledAll && remaining == 0 ? jobs / drainS : Double.NaN;
            log(String.format("drain: %.0f executions/s (handled all after %.2f s, completed after %.2f s)", jobs / drainS,
                    (tHandled - t0) / 1e9, drainS));

            // Phase 3: pickup latency with the scheduler idle, scheduled through the scheduler itself, so
            // enableImmediateExecution() wakes it at once (an in-process hint: db-scheduler has no LISTEN/NOTIFY).
            settle(simple, schema);
            double[] lat = pickup(jobs, seq -> scheduler.schedule(task.instance(Integer.toString(seq), payload(pad, seq)),
                    Instant.now()), startedAt, failure);
            double p50 = lat[0];
            double p95 = lat[1];
            long early = (long) lat[2];
            long lost = (long) lat[3];
            log(String.format("pickup: p50 %.2f ms, p95 %.2f ms", p50, p95));
            // Phase 3b (reported beside, not in the table): the same through a separate SchedulerClient, i.e. what
            // a job scheduled by another process sees: no hint, the scheduler finds it on its next poll.
            settle(simple, schema);
            double[] cross = pickup(jobs + latencyJobs, seq -> client.schedule(task.instance(Integer.toString(seq),
                    payload(pad, seq)), Instant.now()), startedAt, failure);
            log(String.format("pickup without the in-process hint: p50 %.2f ms, p95 %.2f ms", cross[0], cross[1]));
            scheduler.stop();

            System.out.println("PEERS_RESULT {"
                    + "\"system\":\"db-scheduler\""
                    + ",\"version\":\"" + (version == null ? "16.7.1" : version) + "\""
                    + ",\"enqueue_per_s\":" + num(enqueuePerS, 1)
                    + ",\"drain_per_s\":" + num(drainPerS, 1)
                    + ",\"p50_ms\":" + num(p50, 2)
                    + ",\"p95_ms\":" + num(p95, 2)
                    + ",\"p50_no_hint_ms\":" + num(cross[0], 2)
                    + ",\"p95_no_hint_ms\":" + num(cross[1], 2)
                    + ",\"jobs\":" + jobs
                    + ",\"handled\":" + handled.get()
                    + ",\"duplicates\":" + duplicates.get()
                    + ",\"remaining\":" + remaining
                    + ",\"latency_lost\":" + (lost + (long) cross[3])
                    + ",\"latency_early\":" + early
                    + ",\"payload_bytes\":" + pad.length
                    + ",\"error\":" + (failure.get() == null ? "null" : "\"" + failure.get().toString().replace("\"", "'") + "\"")
                    + ",\"settings\":\"scheduleBatch x" + enqueueBatch + ", " + enqueueCallers + " callers; threads " + workers
                    + ", lock-and-fetch " + lowerLimit + "/" + upperLimit + ", polling " + pollingMillis
                    + " ms, immediate execution; HikariCP " + (workers + 2) + "\""
                    + "}");
        }
        try (Connection c = simple.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP SCHEMA " + schema + " CASCADE");
        }
        System.exit(0);
    }

    /** Single schedules at a fixed rate from sender threads; each call's return is its commit. Returns p50, p95, early, lost. */
    static double[] pickup(int firstSeq, java.util.function.IntConsumer scheduleOne, Map<Integer, Long> startedAt,
                           AtomicReference<Throwable> failure) throws Exception {
        Map<Integer, Long> committedAt = new ConcurrentHashMap<>();
        ExecutorService senders = Executors.newCachedThreadPool();
        long interval = TimeUnit.SECONDS.toNanos(1) / latencyRate;
        long l0 = System.nanoTime();
        List<Future<?>> fs = new ArrayList<>();
        for (int i = 0; i < latencyJobs; i++) {
            long due = l0 + i * interval;
            while (System.nanoTime() < due) {
                LockSupport.parkNanos(due - System.nanoTime());
            }
            int seq = firstSeq + i;
            fs.add(senders.submit(() -> {
                try {
                    scheduleOne.accept(seq);
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

    /** The scheduler every phase runs: {@code workers} threads, lock-and-fetch, immediate execution. */
    static Scheduler scheduler(javax.sql.DataSource pool, OneTimeTask<byte[]> task, String table) {
        return Scheduler.create(pool, task)
                .tableName(table)
                .threads(workers)
                .pollUsingLockAndFetch(lowerLimit, upperLimit)
                .pollingInterval(Duration.ofMillis(pollingMillis))
                .enableImmediateExecution()
                .build();
    }

    /** Schedules executions {@code prefix + seq} for seq in [from, to) with scheduleBatch, {@code enqueueCallers} threads. */
    static void scheduleRange(SchedulerClient client, OneTimeTask<byte[]> task, byte[] pad, String prefix, int from, int to)
            throws Exception {
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
                        List<TaskInstance<?>> batch = new ArrayList<>(last - first);
                        for (int q = first; q < last; q++) {
                            batch.add(task.instance(prefix + q, payload(pad, q)));
                        }
                        client.scheduleBatch(batch, Instant.now());
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

    /** Executions left in the table, counted on one admin connection (the same end test as every driver). */
    static long count(Connection admin, String table) {
        try (Statement s = admin.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*) FROM " + table)) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The task data of execution {@code seq}: 1 KB of random bytes (drawn once) with seq in the first 4. */
    static byte[] payload(byte[] pad, int seq) {
        byte[] b = Arrays.copyOf(pad, pad.length);
        java.nio.ByteBuffer.wrap(b).putInt(0, seq);
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

    static void log(String line) {
        System.err.println("[" + Instant.now() + "] " + line);
    }

    static void parse(String[] args) {
        if (args.length < 1 || args[0].startsWith("--")) {
            throw new IllegalArgumentException("usage: java -jar db-scheduler-peer.jar JDBC_URL [--jobs N] [--enqueue-batch N] "
                    + "[--enqueue-callers N] [--workers N] [--latency-jobs N] [--latency-rate N] [--warmup-jobs N] [--schema S] "
                    + "[--lower-limit F] [--upper-limit F] [--polling-ms N]");
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
                case "--latency-jobs" -> latencyJobs = Integer.parseInt(v);
                case "--latency-rate" -> latencyRate = Integer.parseInt(v);
                case "--schema" -> schema = v;
                case "--drain-timeout-s" -> drainTimeoutS = Integer.parseInt(v);
                case "--warmup-jobs" -> warmupJobs = Integer.parseInt(v);
                case "--lower-limit" -> lowerLimit = Double.parseDouble(v);
                case "--upper-limit" -> upperLimit = Double.parseDouble(v);
                case "--polling-ms" -> pollingMillis = Long.parseLong(v);
                // db-scheduler's fetch size is upper-limit × threads; --fetch is accepted for a uniform command line
                case "--fetch" -> { }
                default -> throw new IllegalArgumentException("unknown argument " + a);
            }
        }
    }
}
