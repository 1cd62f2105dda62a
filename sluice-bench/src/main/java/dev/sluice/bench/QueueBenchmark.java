package dev.sluice.bench;

import dev.sluice.Queue;
import dev.sluice.QueueOptions;
import dev.sluice.Sluice;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
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
 *   <li>with {@link Options#keepRuns() keepRuns} D only, the <b>keep-runs drain</b>: N more jobs enqueued the same
 *   way on a queue whose handle stamps {@code keepRuns(D)}, drained by the same worker settings, so that every claim
 *   and ack also writes the event trail and the run record; {@code keep_runs_ratio} = its rate ÷ the plain drain's
 *   (target {@value #KEEP_RUNS_TARGET}, reported as pass/fail);</li>
 *   <li><b>pickup</b>: P single enqueues at R per second with an idle worker; latency = handler start −
 *   enqueue call start.</li>
 * </ol>
 * A warm-up round of up to 100,000 jobs (run 0, not reported) runs first: in a fresh JVM the JIT compiles
 * the driver's and Sluice's paths for seconds, and would tax whichever side ran first.
 * Before each drain both tables are vacuumed and analyzed and a checkpoint is taken, so neither side
 * depends on autovacuum's timing or pays for the other's dirty buffers. A drain ends when the database
 * shows the last job gone, not when the last handler ran. Every handler call is counted per job:
 * a missing job or a job left in the table makes the run a failure.
 *
 * <p>This class holds what is run and reported and the order of a run; the phases are measured by
 * {@link QueueEnqueue}, {@link QueueDrain} and {@link QueuePickup}.
 */
public final class QueueBenchmark {
    /** The scenario name in results. */
    public static final String SCENARIO = "queue";
    /** The unit of {@code ours} and {@code reference}. */
    public static final String UNIT = "jobs/s";
    /** The drain reference. */
    public static final String REFERENCE = "raw-skip-locked";
    /** Target with {@link Options#keepRuns()}: keep-runs drain ÷ plain drain at least this (issue 16). */
    public static final double KEEP_RUNS_TARGET = 0.75;
    /** The enqueue reference. */
    public static final String INSERT_REFERENCE = "raw-insert";

    /** Jobs of the warm-up round (run 0, not reported). */
    private static final int WARMUP_JOBS = 100_000;

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
     * @param keepRuns       {@code null} (default): no keep-runs drain; else each run also enqueues and drains N jobs on
     *                       a queue whose handle stamps {@code keepRuns} (1 s to 3650 d), with the same worker settings
     */
    public record Options(String databaseUrl, int jobs, int enqueueBatch, int enqueueCallers, int workers, int batch,
                          int payloadBytes, int pickupJobs, int pickupRate, int runs, Duration keepRuns) {
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
            if (keepRuns != null && (keepRuns.compareTo(Duration.ofSeconds(1)) < 0 || keepRuns.compareTo(Duration.ofDays(3650)) > 0)) {
                throw new IllegalArgumentException("keep runs must be between 1s and 3650d (got " + keepRuns + ")");
            }
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
            return new Options(null, 100_000, 1000, 4, 8, 256, 1024, 200, 20, 1, null);
        }

        public Options withDatabaseUrl(String url) {
            return new Options(url, jobs, enqueueBatch, enqueueCallers, workers, batch, payloadBytes, pickupJobs,
                    pickupRate, runs, keepRuns);
        }

        public Options withJobs(int n) {
            return new Options(databaseUrl, n, enqueueBatch, enqueueCallers, workers, batch, payloadBytes,
                    pickupJobs, pickupRate, runs, keepRuns);
        }

        public Options withEnqueueBatch(int n) {
            return new Options(databaseUrl, jobs, n, enqueueCallers, workers, batch, payloadBytes, pickupJobs,
                    pickupRate, runs, keepRuns);
        }

        public Options withEnqueueCallers(int n) {
            return new Options(databaseUrl, jobs, enqueueBatch, n, workers, batch, payloadBytes, pickupJobs,
                    pickupRate, runs, keepRuns);
        }

        public Options withWorkers(int n) {
            return new Options(databaseUrl, jobs, enqueueBatch, enqueueCallers, n, batch, payloadBytes, pickupJobs,
                    pickupRate, runs, keepRuns);
        }

        public Options withBatch(int n) {
            return new Options(databaseUrl, jobs, enqueueBatch, enqueueCallers, workers, n, payloadBytes, pickupJobs,
                    pickupRate, runs, keepRuns);
        }

        public Options withPayloadBytes(int n) {
            return new Options(databaseUrl, jobs, enqueueBatch, enqueueCallers, workers, batch, n, pickupJobs,
                    pickupRate, runs, keepRuns);
        }

        public Options withPickup(int jobsToPick, int perSecond) {
            return new Options(databaseUrl, jobs, enqueueBatch, enqueueCallers, workers, batch, payloadBytes, jobsToPick,
                    perSecond, runs, keepRuns);
        }

        public Options withRuns(int n) {
            return new Options(databaseUrl, jobs, enqueueBatch, enqueueCallers, workers, batch, payloadBytes, pickupJobs,
                    pickupRate, n, keepRuns);
        }

        /** With a keep-runs drain beside the plain one ({@code null}: none). */
        public Options withKeepRuns(Duration d) {
            return new Options(databaseUrl, jobs, enqueueBatch, enqueueCallers, workers, batch, payloadBytes, pickupJobs,
                    pickupRate, runs, d);
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
     * @param keepRuns          the keep-runs drain, or {@code null} without {@link Options#keepRuns()}
     */
    public record RunResult(int run, double enqueuePerSecond, double rawInsertPerSecond, double drainPerSecond,
                            double rawSkipLockedPerSecond, double pickupP50Ms, double pickupP95Ms, long missing,
                            long duplicates, long pickupMissing, double drainClientCpuSeconds,
                            double rawSkipLockedClientCpuSeconds, KeepRuns keepRuns) {
        /** A run without the keep-runs drain. */
        public RunResult(int run, double enqueuePerSecond, double rawInsertPerSecond, double drainPerSecond,
                         double rawSkipLockedPerSecond, double pickupP50Ms, double pickupP95Ms, long missing,
                         long duplicates, long pickupMissing, double drainClientCpuSeconds,
                         double rawSkipLockedClientCpuSeconds) {
            this(run, enqueuePerSecond, rawInsertPerSecond, drainPerSecond, rawSkipLockedPerSecond, pickupP50Ms,
                    pickupP95Ms, missing, duplicates, pickupMissing, drainClientCpuSeconds, rawSkipLockedClientCpuSeconds,
                    null);
        }

        /** Keep-runs drain ÷ plain drain of this run; NaN without the keep-runs drain. */
        public double keepRunsRatio() {
            return keepRuns == null ? Double.NaN : keepRuns.drainPerSecond() / drainPerSecond;
        }

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
            if (keepRuns != null) {
                m.put("keep_runs_enqueue_per_s", BenchJson.round(keepRuns.enqueuePerSecond(), 1));
                m.put("keep_runs_drain_per_s", BenchJson.round(keepRuns.drainPerSecond(), 1));
                m.put("keep_runs_ratio", BenchJson.round(keepRunsRatio(), 3));
                m.put("keep_runs_client_cpu_s", BenchJson.round(keepRuns.clientCpuSeconds(), 2));
                m.put("keep_runs_records", keepRuns.records());
                m.put("keep_runs_events", keepRuns.events());
            }
            m.put("jobs", o.jobs());
            m.put("missing", missing);
            m.put("duplicates", duplicates);
            m.put("pickup_missing", pickupMissing);
            return m;
        }
    }

    /**
     * The keep-runs drain of one run: N jobs enqueued ({@code enqueueBatch}, as the plain enqueue) and drained (as the
     * plain drain: same worker settings, until the table holds none of them) on a queue whose handle stamps
     * {@link Options#keepRuns()}, so every ack also writes the run record and the events.
     *
     * @param enqueuePerSecond  jobs per second through {@code enqueueBatch} on that queue
     * @param drainPerSecond    jobs per second drained (worker start to table empty)
     * @param clientCpuSeconds  CPU seconds this JVM used during the drain
     * @param records           {@code job_run} rows of the queue with status {@code succeeded} after the drain (must be N)
     * @param events            {@code job_event} rows of the queue after the drain (enqueued, claimed, succeeded: 3N)
     * @param missing           jobs whose handler never ran, or left in the table (must be 0; counted in the run's)
     * @param duplicates        handler calls for a job already handled (counted in the run's)
     */
    public record KeepRuns(double enqueuePerSecond, double drainPerSecond, double clientCpuSeconds, long records,
                           long events, long missing, long duplicates) {
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
            if (options.keepRuns() != null) {
                double keptRatio = Bench.median(runs, RunResult::keepRunsRatio);
                m.put("keep_runs_s", options.keepRuns().toMillis() / 1000.0);
                m.put("keep_runs_enqueue_per_s", BenchJson.round(Bench.median(runs, r -> r.keepRuns().enqueuePerSecond()), 1));
                m.put("keep_runs_drain_per_s", BenchJson.round(Bench.median(runs, r -> r.keepRuns().drainPerSecond()), 1));
                m.put("keep_runs_ratio", BenchJson.round(keptRatio, 3));
                m.put("target_keep_runs", keptRatio >= KEEP_RUNS_TARGET ? "pass" : "fail");
                m.put("keep_runs_records", runs.stream().mapToLong(r -> r.keepRuns().records()).sum());
            }
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
                if (r.keepRuns() != null && r.keepRuns().records() != options.jobs()) {
                    p.add("run " + r.run() + ": the keep-runs drain left " + r.keepRuns().records() + " run records for "
                            + options.jobs() + " jobs");
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
        double enqueue = QueueEnqueue.ours(queue, o);
        listener.phase(run, INSERT_REFERENCE);
        Bench.checkpoint(admin);
        double rawInsert = QueueEnqueue.raw(ds, raw, queue.name(), qo, o);

        listener.phase(run, "drain");
        settle(admin, s + ".job", raw);
        QueueDrain.Drained ours = QueueDrain.ours(queue, admin, s + ".job", o);
        listener.phase(run, REFERENCE);
        settle(admin, s + ".job", raw);
        QueueDrain.Drained ref = QueueDrain.raw(ds, admin, raw, queue.name(), o);
        Bench.execute(admin, "DROP TABLE " + raw);
        KeepRuns kept = o.keepRuns() == null ? null : keepRuns(c, run, o);

        double p50 = Double.NaN;
        double p95 = Double.NaN;
        long pickupMissing = 0;
        if (o.pickupJobs() > 0) {
            listener.phase(run, "pickup");
            settle(admin, s + ".job", null);
            double[] lat = QueuePickup.measure(sluice.queue("bench.pickup-" + run), o);
            pickupMissing = o.pickupJobs() - lat.length;
            Arrays.sort(lat);
            p50 = Bench.quantile(lat, 0.50);
            p95 = Bench.quantile(lat, 0.95);
        }
        return new RunResult(run, enqueue, rawInsert, ours.perSecond(), ref.perSecond(), p50, p95,
                ours.missing() + ref.missing() + (kept == null ? 0 : kept.missing()),
                ours.duplicates() + ref.duplicates() + (kept == null ? 0 : kept.duplicates()), pickupMissing,
                ours.clientCpuSeconds(), ref.clientCpuSeconds(), kept);
    }

    /**
     * The keep-runs drain: a queue of its own whose handle stamps keepRuns, N jobs enqueued as in the enqueue phase,
     * then drained as the plain drain was (after the same vacuum, analyze and checkpoint, here also of the run tables).
     */
    private static KeepRuns keepRuns(ScenarioRunner.Context c, int run, Options o) throws SQLException {
        Connection admin = c.admin();
        String s = Bench.quote(c.schema());
        Queue<byte[]> queue = c.sluice().queue("bench.queue-runs-" + run, byte[].class,
                QueueOptions.defaults().toBuilder().keepRuns(o.keepRuns()).build());
        c.listener().phase(run, "enqueue (keepRuns)");
        Bench.checkpoint(admin);
        double enqueue = QueueEnqueue.ours(queue, o);
        c.listener().phase(run, "drain (keepRuns)");
        Bench.execute(admin, "VACUUM (ANALYZE) " + s + ".job_run");
        Bench.execute(admin, "VACUUM (ANALYZE) " + s + ".job_event");
        settle(admin, s + ".job", null);
        QueueDrain.Drained d = QueueDrain.ours(queue, admin, s + ".job", o);
        String q = literal(queue.name());
        long records = Bench.queryLong(admin, "SELECT count(*) FROM " + s + ".job_run WHERE queue = " + q
                + " AND status = 'succeeded'");
        long events = Bench.queryLong(admin, "SELECT count(*) FROM " + s + ".job_event WHERE queue = " + q);
        return new KeepRuns(enqueue, d.perSecond(), d.clientCpuSeconds(), records, events, d.missing(), d.duplicates());
    }

    private static String literal(String text) {
        return "'" + text.replace("'", "''") + "'";
    }

    /** Vacuum and analyze the tables, then a checkpoint: the drains start from the same state. */
    private static void settle(Connection admin, String job, String raw) throws SQLException {
        Bench.execute(admin, "VACUUM (ANALYZE) " + job);
        if (raw != null) {
            Bench.execute(admin, "VACUUM (ANALYZE) " + raw);
        }
        Bench.checkpoint(admin);
    }
}
