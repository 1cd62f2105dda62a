package dev.sluice.bench;

import dev.sluice.NewJob;
import dev.sluice.Queue;
import dev.sluice.QueueOptions;
import dev.sluice.Sluice;
import dev.sluice.WorkOptions;
import dev.sluice.Worker;
import java.nio.ByteBuffer;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;

/**
 * The {@code queue} benchmark (docs/benchmarks.md): per run, in one schema of its own on one server,
 * <ol>
 *   <li><b>enqueue</b> N jobs of 1 KB through {@link Queue#enqueueBatch} in batches of E from K caller
 *   threads, beside the {@code raw-insert} reference: the same rows by a prepared
 *   {@code INSERT … SELECT unnest(…)} into a plain table with the job table's columns, same batch size
 *   and connections;</li>
 *   <li><b>drain</b> them with one {@link Queue#work} worker (no-op handler, concurrency C, prefetch 2B, so
 *   that its claims, made when half its capacity is free, take about B jobs),
 *   beside the {@code raw-skip-locked} reference burning down its N rows: C connections each claiming
 *   B rows by {@code UPDATE … WHERE id IN (SELECT … FOR UPDATE SKIP LOCKED LIMIT B) RETURNING …},
 *   running the no-op handler on each, then deleting them in a second transaction;</li>
 *   <li><b>pickup</b>: P single enqueues at R per second with an idle worker; latency = handler start −
 *   enqueue call start.</li>
 * </ol>
 * A warm-up round of up to 100,000 jobs (run 0, not reported) runs first: in a fresh JVM the JIT compiles
 * the driver's and Sluice's paths for seconds, and would tax whichever side ran first.
 * Before each drain both tables are vacuumed and analyzed and a checkpoint is taken, so neither side
 * depends on autovacuum's timing or pays for the other's dirty buffers. A drain ends when the database
 * shows the last job gone, not when the last handler ran. Every handler call is counted per job:
 * a missing job or a job left in the table makes the run a failure.
 */
public final class QueueBenchmark {
    /** The scenario name in results. */
    public static final String SCENARIO = "queue";
    /** The unit of {@code ours} and {@code reference}. */
    public static final String UNIT = "jobs/s";
    /** The drain reference. */
    public static final String REFERENCE = "raw-skip-locked";
    /** The enqueue reference. */
    public static final String INSERT_REFERENCE = "raw-insert";

    /** Jobs of the warm-up round (run 0, not reported). */
    private static final int WARMUP_JOBS = 100_000;
    /** How long a drain may take before the run is a failure. */
    private static final Duration DRAIN_TIMEOUT = Duration.ofMinutes(10);

    /**
     * What to run.
     *
     * @param databaseUrl    JDBC URL of the server to measure; {@code null} starts a temporary embedded one
     * @param jobs           jobs enqueued and drained per run (default 100000)
     * @param enqueueBatch   jobs per {@code enqueueBatch} call and per reference insert (default 1000)
     * @param enqueueCallers threads enqueueing concurrently, and reference insert connections (default 4)
     * @param workers        handler concurrency of our worker, and reference claim connections (default 8)
     * @param batch          jobs per reference claim; our worker's prefetch is 2B (default 256)
     * @param payloadBytes   payload size (default 1024)
     * @param pickupJobs     single enqueues of the pickup phase (default 200; 0 skips it)
     * @param pickupRate     pickup enqueues per second (default 20)
     * @param runs           how many times to repeat everything; medians are reported (default 1)
     */
    public record Options(String databaseUrl, int jobs, int enqueueBatch, int enqueueCallers, int workers, int batch,
                          int payloadBytes, int pickupJobs, int pickupRate, int runs) {
        public Options {
            check("jobs", jobs, 1, 10_000_000);
            check("enqueue batch", enqueueBatch, 1, 10_000);
            check("enqueue callers", enqueueCallers, 1, 256);
            check("workers", workers, 1, 1024);
            check("batch", batch, 1, 1000);
            check("payload bytes", payloadBytes, 8, 1024 * 1024);
            check("pickup jobs", pickupJobs, 0, 100_000);
            check("pickup rate", pickupRate, 1, 10_000);
            check("runs", runs, 1, 100);
            if (databaseUrl != null && databaseUrl.isBlank()) {
                databaseUrl = null;
            }
        }

        private static void check(String what, int v, int min, int max) {
            if (v < min || v > max) {
                throw new IllegalArgumentException(what + " must be between " + min + " and " + max + " (got " + v + ")");
            }
        }

        /** Embedded server, 100000 jobs of 1 KB, batches of 1000 from 4 callers, 8 workers, batch 256, 200 pickups at 20/s. */
        public static Options defaults() {
            return new Options(null, 100_000, 1000, 4, 8, 256, 1024, 200, 20, 1);
        }

        public Options withDatabaseUrl(String url) {
            return new Options(url, jobs, enqueueBatch, enqueueCallers, workers, batch, payloadBytes, pickupJobs, pickupRate, runs);
        }

        public Options withJobs(int n) {
            return new Options(databaseUrl, n, enqueueBatch, enqueueCallers, workers, batch, payloadBytes, pickupJobs, pickupRate, runs);
        }

        public Options withEnqueueBatch(int n) {
            return new Options(databaseUrl, jobs, n, enqueueCallers, workers, batch, payloadBytes, pickupJobs, pickupRate, runs);
        }

        public Options withEnqueueCallers(int n) {
            return new Options(databaseUrl, jobs, enqueueBatch, n, workers, batch, payloadBytes, pickupJobs, pickupRate, runs);
        }

        public Options withWorkers(int n) {
            return new Options(databaseUrl, jobs, enqueueBatch, enqueueCallers, n, batch, payloadBytes, pickupJobs, pickupRate, runs);
        }

        public Options withBatch(int n) {
            return new Options(databaseUrl, jobs, enqueueBatch, enqueueCallers, workers, n, payloadBytes, pickupJobs, pickupRate, runs);
        }

        public Options withPayloadBytes(int n) {
            return new Options(databaseUrl, jobs, enqueueBatch, enqueueCallers, workers, batch, n, pickupJobs, pickupRate, runs);
        }

        public Options withPickup(int jobsToPick, int perSecond) {
            return new Options(databaseUrl, jobs, enqueueBatch, enqueueCallers, workers, batch, payloadBytes, jobsToPick,
                    perSecond, runs);
        }

        public Options withRuns(int n) {
            return new Options(databaseUrl, jobs, enqueueBatch, enqueueCallers, workers, batch, payloadBytes, pickupJobs,
                    pickupRate, n);
        }
    }

    /**
     * One run.
     *
     * @param run               1-based run number
     * @param enqueuePerSecond  jobs per second through {@code enqueueBatch} (first call to last return)
     * @param rawInsertPerSecond rows per second of the raw-insert reference, timed the same way
     * @param drainPerSecond    jobs per second drained by our worker (worker start to table empty)
     * @param rawSkipLockedPerSecond rows per second burnt down by raw-skip-locked (start to table empty)
     * @param pickupP50Ms       median pickup latency (enqueue call start → handler start), NaN when skipped
     * @param pickupP95Ms       95th percentile of the same
     * @param missing           jobs (ours or the reference's) whose handler never ran, or rows left behind (must be 0)
     * @param duplicates        handler calls for a job already handled (at-least-once allows them; expected 0)
     * @param pickupMissing     pickup jobs never handled within the timeout (must be 0)
     * @param drainClientCpuSeconds CPU seconds this JVM used during our drain (the worker's client-side cost)
     * @param rawSkipLockedClientCpuSeconds CPU seconds this JVM used during the reference's drain
     */
    public record RunResult(int run, double enqueuePerSecond, double rawInsertPerSecond, double drainPerSecond,
                            double rawSkipLockedPerSecond, double pickupP50Ms, double pickupP95Ms, long missing,
                            long duplicates, long pickupMissing, double drainClientCpuSeconds,
                            double rawSkipLockedClientCpuSeconds) {
        public double enqueueRatio() {
            return enqueuePerSecond / rawInsertPerSecond;
        }

        public double ratio() {
            return drainPerSecond / rawSkipLockedPerSecond;
        }

        Map<String, Object> toJson(Options o) {
            Map<String, Object> m = BenchJson.putFigures(BenchJson.runLine(SCENARIO, run),
                    BenchJson.round(drainPerSecond, 1), BenchJson.round(rawSkipLockedPerSecond, 1), REFERENCE,
                    BenchJson.round(ratio(), 3), UNIT);
            m.put("enqueue_per_s", BenchJson.round(enqueuePerSecond, 1));
            m.put("raw_insert_per_s", BenchJson.round(rawInsertPerSecond, 1));
            m.put("enqueue_ratio", BenchJson.round(enqueueRatio(), 3));
            m.put("drain_per_s", BenchJson.round(drainPerSecond, 1));
            m.put("raw_skip_locked_per_s", BenchJson.round(rawSkipLockedPerSecond, 1));
            m.put("pickup_p50_ms", BenchJson.round(pickupP50Ms, 2));
            m.put("pickup_p95_ms", BenchJson.round(pickupP95Ms, 2));
            m.put("drain_client_cpu_s", BenchJson.round(drainClientCpuSeconds, 2));
            m.put("raw_skip_locked_client_cpu_s", BenchJson.round(rawSkipLockedClientCpuSeconds, 2));
            m.put("jobs", o.jobs());
            m.put("missing", missing);
            m.put("duplicates", duplicates);
            m.put("pickup_missing", pickupMissing);
            return m;
        }
    }

    /** Every run and the medians. */
    public record Result(Options options, ProduceBenchmark.Environment environment, List<RunResult> runs)
            implements ScenarioResult {
        public Result {
            runs = List.copyOf(runs);
        }

        @Override
        public List<Map<String, Object>> runLines() {
            return runs.stream().map(r -> r.toJson(options)).toList();
        }

        @Override
        public Map<String, Object> summary() {
            Map<String, Object> m = BenchJson.summaryLine(SCENARIO,
                    BenchJson.round(Bench.median(runs, RunResult::drainPerSecond), 1),
                    BenchJson.round(Bench.median(runs, RunResult::rawSkipLockedPerSecond), 1), REFERENCE,
                    BenchJson.round(Bench.median(runs, RunResult::ratio), 3), UNIT, environment);
            // The drain has no fixed window: its duration is the work's (median seconds of our drain).
            m.put("duration_s", BenchJson.round(Bench.median(runs, r -> options.jobs() / r.drainPerSecond()), 2));
            m.put("enqueue_per_s", BenchJson.round(Bench.median(runs, RunResult::enqueuePerSecond), 1));
            m.put("raw_insert_per_s", BenchJson.round(Bench.median(runs, RunResult::rawInsertPerSecond), 1));
            m.put("enqueue_ratio", BenchJson.round(Bench.median(runs, RunResult::enqueueRatio), 3));
            m.put("drain_per_s", BenchJson.round(Bench.median(runs, RunResult::drainPerSecond), 1));
            m.put("raw_skip_locked_per_s", BenchJson.round(Bench.median(runs, RunResult::rawSkipLockedPerSecond), 1));
            m.put("pickup_p50_ms", BenchJson.round(Bench.median(runs, RunResult::pickupP50Ms), 2));
            m.put("pickup_p95_ms", BenchJson.round(Bench.median(runs, RunResult::pickupP95Ms), 2));
            m.put("jobs", options.jobs());
            m.put("payload_bytes", options.payloadBytes());
            m.put("enqueue_batch", options.enqueueBatch());
            m.put("enqueue_callers", options.enqueueCallers());
            m.put("workers", options.workers());
            m.put("batch_size", options.batch());
            m.put("pickup_jobs", options.pickupJobs());
            m.put("pickup_rate_per_s", options.pickupRate());
            m.put("runs", runs.size());
            m.put("embedded", environment.embedded());
            m.put("missing", runs.stream().mapToLong(RunResult::missing).sum());
            m.put("duplicates", runs.stream().mapToLong(RunResult::duplicates).sum());
            return m;
        }

        @Override
        public List<String> problems() {
            List<String> p = new ArrayList<>();
            for (RunResult r : runs) {
                if (r.missing() != 0) {
                    p.add("run " + r.run() + ": " + r.missing() + " jobs were never handled or left behind");
                }
                if (r.pickupMissing() != 0) {
                    p.add("run " + r.run() + ": " + r.pickupMissing() + " pickup jobs were never handled");
                }
            }
            return p;
        }
    }

    /** Runs the benchmark without progress callbacks. */
    public Result run(Options options) {
        return run(options, ScenarioListener.NONE);
    }

    /** Runs the benchmark, reporting progress to {@code listener}. */
    public Result run(Options options, ScenarioListener listener) {
        Objects.requireNonNull(options, "options");
        // Enqueue callers or handler slots, plus the worker's claim loop and completer, and the client's
        // LISTEN session (the peers' pool of 10 at the defaults).
        int poolSize = Math.max(options.enqueueCallers(), options.workers()) + 2;
        return ScenarioRunner.run(ScenarioRunner.Setup.of(options.databaseUrl(), "the benchmark", poolSize)
                .keepingStreams(), listener, c -> measure(c, options));
    }

    private Result measure(ScenarioRunner.Context c, Options o) throws SQLException {
        c.sluice().system().register();
        // A short round first, not reported, so that neither side pays for the JIT compiling the
        // driver's and its own paths (in a fresh JVM the compiler threads take a core for seconds).
        Options warm = o.withJobs(Math.min(o.jobs(), WARMUP_JOBS)).withPickup(Math.min(o.pickupJobs(), 20),
                Math.max(o.pickupRate(), 100));
        oneRun(c, 0, warm);
        List<RunResult> runs = c.runs(o.runs(), run -> oneRun(c, run, o), r -> c.listener().finished(r.toJson(o)));
        return new Result(o, c.environment(), runs);
    }

    private RunResult oneRun(ScenarioRunner.Context c, int run, Options o) throws SQLException {
        Sluice sluice = c.sluice();
        DataSource ds = c.dataSource();
        Connection admin = c.admin();
        String schema = c.schema();
        ScenarioListener listener = c.listener();
        String s = Bench.quote(schema);
        String raw = s + ".raw_job_" + run;
        Queue<byte[]> queue = sluice.queue("bench.queue-" + run);
        // The job table's columns and defaults, its primary key, and the two indexes every claim and
        // rescue needs (pending in claim order, processing by claim expiry); nothing else.
        Bench.execute(admin, "CREATE TABLE " + raw + " (LIKE " + s + ".job INCLUDING DEFAULTS INCLUDING IDENTITY)");
        Bench.execute(admin, "ALTER TABLE " + raw + " ADD PRIMARY KEY (id)");
        Bench.execute(admin, "CREATE INDEX ON " + raw + " (queue, priority DESC, run_at, id) WHERE state = 'pending'");
        Bench.execute(admin, "CREATE INDEX ON " + raw + " (claim_expires_at) WHERE state = 'processing'");
        QueueOptions qo = queue.options();

        listener.phase(run, "enqueue");
        Bench.checkpoint(admin);
        double enqueue = enqueueOurs(queue, o);
        listener.phase(run, INSERT_REFERENCE);
        Bench.checkpoint(admin);
        double rawInsert = enqueueRaw(ds, raw, queue.name(), qo, o);

        listener.phase(run, "drain");
        settle(admin, s + ".job", raw);
        Drained ours = drainOurs(queue, admin, s + ".job", o);
        listener.phase(run, REFERENCE);
        settle(admin, s + ".job", raw);
        Drained ref = drainRaw(ds, admin, raw, queue.name(), o);
        Bench.execute(admin, "DROP TABLE " + raw);

        double p50 = Double.NaN;
        double p95 = Double.NaN;
        long pickupMissing = 0;
        if (o.pickupJobs() > 0) {
            listener.phase(run, "pickup");
            settle(admin, s + ".job", null);
            double[] lat = pickup(sluice.queue("bench.pickup-" + run), o);
            pickupMissing = o.pickupJobs() - lat.length;
            Arrays.sort(lat);
            p50 = Bench.quantile(lat, 0.50);
            p95 = Bench.quantile(lat, 0.95);
        }
        return new RunResult(run, enqueue, rawInsert, ours.perSecond(), ref.perSecond(), p50, p95,
                ours.missing() + ref.missing(), ours.duplicates() + ref.duplicates(), pickupMissing,
                ours.clientCpuSeconds(), ref.clientCpuSeconds());
    }

    /** Vacuum and analyze the tables, then a checkpoint: the drains start from the same state. */
    private static void settle(Connection admin, String job, String raw) throws SQLException {
        Bench.execute(admin, "VACUUM (ANALYZE) " + job);
        if (raw != null) {
            Bench.execute(admin, "VACUUM (ANALYZE) " + raw);
        }
        Bench.checkpoint(admin);
    }

    /** The payload of job {@code seq}: its number in the first four bytes, random bytes after. */
    private static byte[] payload(byte[] pad, int seq) {
        byte[] p = pad.clone();
        ByteBuffer.wrap(p).putInt(0, seq);
        return p;
    }

    // ---------------------------------------------------------------- enqueue

    private static double enqueueOurs(Queue<byte[]> queue, Options o) {
        byte[] pad = Bench.randomBytes(o.payloadBytes());
        java.util.concurrent.atomic.AtomicInteger next = new java.util.concurrent.atomic.AtomicInteger();
        long t0 = System.nanoTime();
        runThreads(o.enqueueCallers(), "bench-enqueue-", i -> {
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
    private static double enqueueRaw(DataSource ds, String raw, String queue, QueueOptions qo, Options o) {
        String insert = "INSERT INTO " + raw + " (queue, payload, content_type, visibility_timeout_ns, max_attempts,"
                + " backoff_base_ns, backoff_max_ns, dead_letter_retention_ns)"
                + " SELECT ?, p, ?, ?, ?, ?, ?, ? FROM unnest(?::bytea[]) AS u(p)";
        byte[] pad = Bench.randomBytes(o.payloadBytes());
        java.util.concurrent.atomic.AtomicInteger next = new java.util.concurrent.atomic.AtomicInteger();
        long t0 = System.nanoTime();
        runThreads(o.enqueueCallers(), "bench-raw-insert-", i -> {
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

    // ---------------------------------------------------------------- drain

    /** A drain: its rate, what went wrong, and this JVM's CPU seconds during it (client-side cost). */
    private record Drained(double perSecond, long missing, long duplicates, double clientCpuSeconds) {
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

    private static Drained drainOurs(Queue<byte[]> queue, Connection admin, String job, Options o) throws SQLException {
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
    private static Drained drainRaw(DataSource ds, Connection admin, String raw, String queue, Options o)
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
        runThreads(o.workers(), "bench-raw-skip-locked-", i -> {
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

    // ---------------------------------------------------------------- pickup

    /** Latencies in ms of the pickup jobs that were handled (enqueue call start → handler start). */
    private static double[] pickup(Queue<byte[]> queue, Options o) {
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

    // ---------------------------------------------------------------- helpers

    private static String literal(String s) {
        return "'" + s.replace("'", "''") + "'";
    }

    /** Runs {@code n} threads of {@code body} and waits for them; the first failure is rethrown. */
    private static void runThreads(int n, String name, Phase.Worker body) {
        List<Thread> threads = new ArrayList<>(n);
        java.util.concurrent.atomic.AtomicReference<Throwable> failure = new java.util.concurrent.atomic.AtomicReference<>();
        for (int i = 0; i < n; i++) {
            int index = i;
            Thread t = new Thread(() -> {
                try {
                    body.run(index);
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, name + i);
            t.setDaemon(true);
            threads.add(t);
        }
        threads.forEach(Thread::start);
        for (Thread t : threads) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new BenchmarkException("interrupted", e);
            }
        }
        Throwable f = failure.get();
        if (f != null) {
            throw new BenchmarkException("a thread of the benchmark failed: " + f, f);
        }
    }
}
