package dev.sluice.bench;

import dev.sluice.JobRun;
import dev.sluice.NewJob;
import dev.sluice.Queue;
import dev.sluice.RunStatus;
import dev.sluice.WorkOptions;
import dev.sluice.Worker;
import java.nio.ByteBuffer;
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
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * The {@code await} benchmark (docs/benchmarks.md): per run, N jobs (default 1,000) are enqueued on a queue without
 * keepRuns ({@link Queue#await} works on live jobs), then N awaiter threads — platform threads, one per job — each
 * call {@link Queue#await} on a job of their own. Once the database shows every job marked {@code awaited} (the mark
 * comes after the waiter's wake registration, so all N are registered), one {@link Queue#work} worker (concurrency C,
 * default 8) acks them: its handler calls {@link dev.sluice.JobHandle#ack()} and notes {@link System#nanoTime()}
 * right after it returned {@code true} (the ack committed, and with it the {@code r:<id>} notification). Each awaiter
 * notes {@code nanoTime} when {@code await} returned. Latency per job = await returned − ack returned, both on this
 * JVM's clock; the database's {@code finished_at} is not compared with it (another clock). An awaiter can return
 * before its ack's handler thread ran again (it is woken by the commit, not by the handler): such a latency is
 * negative, counted in {@code negative} and taken as 0. "Ack returned" is thus a late stand-in for the commit and the
 * latencies a lower bound; the upper bound is reported beside them, counted from the ack call's start
 * ({@code from_ack_call_*}, which includes the ack's own batching, statements and commit).
 *
 * <p>A warm-up round (run 0, not reported, same size) runs first, so that the JIT does not land in run 1.
 * Target: p50 ≤ {@value #TARGET_P50_MS} ms (issue 16), reported as pass/fail. An awaiter that failed or returned
 * a run that is not {@code succeeded}, or a job whose ack or wake-up is missing, makes the run a failure.
 */
public final class AwaitBenchmark {
    /** The scenario name in results. */
    public static final String SCENARIO = "await";
    /** The unit of {@code ours}. */
    public static final String UNIT = "ms";
    /** Target: p50 of ack → wake-up at most this, in ms. */
    public static final double TARGET_P50_MS = 5.0;
    /** How long each awaiter waits, and how long the whole run may take before it fails. */
    static final Duration TIMEOUT = Duration.ofMinutes(2);
    /** A time not noted (yet). */
    private static final long UNSET = Long.MIN_VALUE;

    /**
     * What to run.
     *
     * @param databaseUrl  JDBC URL of the server to measure; {@code null} starts a temporary embedded one
     * @param jobs         jobs, and awaiter threads (one per job) (default 1000; 1 to 10,000)
     * @param workers      handler concurrency of the acking worker (default 8)
     * @param payloadBytes payload size (default 1024)
     * @param runs         how many times to repeat; medians are reported (default 1)
     */
    public record Options(String databaseUrl, int jobs, int workers, int payloadBytes, int runs) {
        public Options {
            check("jobs", jobs, 1, 10_000);
            check("workers", workers, 1, 256);
            check("payload bytes", payloadBytes, 8, 1024 * 1024);
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

        /** Embedded server, 1000 jobs and awaiters, 8 workers, 1 KB payloads, 1 run. */
        public static Options defaults() {
            return new Options(null, 1000, 8, 1024, 1);
        }

        public Options withDatabaseUrl(String url) {
            return new Options(url, jobs, workers, payloadBytes, runs);
        }

        public Options withJobs(int n) {
            return new Options(databaseUrl, n, workers, payloadBytes, runs);
        }

        public Options withWorkers(int n) {
            return new Options(databaseUrl, jobs, n, payloadBytes, runs);
        }

        public Options withRuns(int n) {
            return new Options(databaseUrl, jobs, workers, payloadBytes, n);
        }

        /** Connections of the client's pool: the handlers' acks and as many awaiter reads at once, the worker's loops,
         *  the LISTEN session and a spare. */
        int poolSize() {
            return 2 * workers + 4;
        }
    }

    /**
     * One run.
     *
     * @param run             1-based run number
     * @param count           jobs with both an ack and a wake-up time (must be N)
     * @param p50Ms           median of ack returned → await returned, ms
     * @param p99Ms           99th percentile of the same
     * @param maxMs           the largest
     * @param negative        wake-ups noted before their ack's handler noted the ack (taken as 0)
     * @param fromCallP50Ms   median of ack call start → await returned: an upper bound (it holds the ack's round trip)
     * @param fromCallP99Ms   99th percentile of the same
     * @param ackCallP50Ms    median of the ack call itself (call start → return: statement, commit, round trip)
     * @param registerSeconds from the first awaiter's start until every job was marked awaited
     * @param ackSeconds      from the first ack's return to the last's (the span the awaiters were woken in)
     * @param failed          awaiters that threw or returned a run other than succeeded (must be 0)
     * @param firstFailure    the first such failure, or {@code null}
     */
    public record RunResult(int run, long count, double p50Ms, double p99Ms, double maxMs, long negative,
                            double fromCallP50Ms, double fromCallP99Ms, double ackCallP50Ms, double registerSeconds,
                            double ackSeconds, long failed, String firstFailure) {
        Map<String, Object> toJson(Options o) {
            Map<String, Object> m = BenchJson.putFigures(BenchJson.runLine(SCENARIO, run), BenchJson.round(p50Ms, 2),
                    null, null, null, UNIT);
            m.put("p50_ms", BenchJson.round(p50Ms, 2));
            m.put("p99_ms", BenchJson.round(p99Ms, 2));
            m.put("max_ms", BenchJson.round(maxMs, 2));
            m.put("count", count);
            m.put("negative", negative);
            m.put("from_ack_call_p50_ms", BenchJson.round(fromCallP50Ms, 2));
            m.put("from_ack_call_p99_ms", BenchJson.round(fromCallP99Ms, 2));
            m.put("ack_call_p50_ms", BenchJson.round(ackCallP50Ms, 2));
            m.put("register_s", BenchJson.round(registerSeconds, 2));
            m.put("acks_s", BenchJson.round(ackSeconds, 3));
            m.put("acks_per_s", BenchJson.round(o.jobs() / ackSeconds, 1));
            m.put("jobs", o.jobs());
            m.put("failed", failed);
            return m;
        }
    }

    /** Every run and the medians. */
    public record Result(Options options, ProduceBenchmark.Environment environment, List<RunResult> runs)
            implements ScenarioResult {
        public Result {
            runs = List.copyOf(runs);
        }

        /** The median of the per-run p50s. */
        public double p50Ms() {
            return Bench.median(runs, RunResult::p50Ms);
        }

        @Override
        public List<Map<String, Object>> runLines() {
            return runs.stream().map(r -> r.toJson(options)).toList();
        }

        @Override
        public Map<String, Object> summary() {
            Map<String, Object> m = BenchJson.summaryLine(SCENARIO, BenchJson.round(p50Ms(), 2), null, null, null, UNIT,
                    environment);
            // The measured span: the worker's acks (median seconds).
            m.put("duration_s", BenchJson.round(Bench.median(runs, RunResult::ackSeconds), 3));
            m.put("p50_ms", BenchJson.round(p50Ms(), 2));
            m.put("p99_ms", BenchJson.round(Bench.median(runs, RunResult::p99Ms), 2));
            m.put("max_ms", BenchJson.round(runs.stream().mapToDouble(RunResult::maxMs).max().orElse(Double.NaN), 2));
            m.put("target_p50_ms", TARGET_P50_MS);
            m.put("target_p50", p50Ms() <= TARGET_P50_MS ? "pass" : "fail");
            m.put("count", runs.stream().mapToLong(RunResult::count).sum());
            m.put("negative", runs.stream().mapToLong(RunResult::negative).sum());
            m.put("from_ack_call_p50_ms", BenchJson.round(Bench.median(runs, RunResult::fromCallP50Ms), 2));
            m.put("from_ack_call_p99_ms", BenchJson.round(Bench.median(runs, RunResult::fromCallP99Ms), 2));
            m.put("ack_call_p50_ms", BenchJson.round(Bench.median(runs, RunResult::ackCallP50Ms), 2));
            m.put("register_s", BenchJson.round(Bench.median(runs, RunResult::registerSeconds), 2));
            m.put("acks_per_s", BenchJson.round(Bench.median(runs, r -> options.jobs() / r.ackSeconds()), 1));
            m.put("jobs", options.jobs());
            m.put("awaiters", options.jobs());
            m.put("workers", options.workers());
            m.put("pool_size", options.poolSize());
            m.put("payload_bytes", options.payloadBytes());
            m.put("runs", runs.size());
            m.put("embedded", environment.embedded());
            m.put("failed", runs.stream().mapToLong(RunResult::failed).sum());
            return m;
        }

        @Override
        public List<String> problems() {
            List<String> p = new ArrayList<>();
            for (RunResult r : runs) {
                if (r.failed() != 0) {
                    p.add("run " + r.run() + ": " + r.failed() + " awaiters failed; the first: " + r.firstFailure());
                }
                if (r.count() != options.jobs()) {
                    p.add("run " + r.run() + ": " + (options.jobs() - r.count()) + " jobs have no ack or no wake-up time");
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
        return ScenarioRunner.run(ScenarioRunner.Setup.of(options.databaseUrl(), "the benchmark", options.poolSize())
                .keepingStreams(), listener, c -> measure(c, options));
    }

    private Result measure(ScenarioRunner.Context c, Options o) throws SQLException {
        c.sluice().system().register();
        oneRun(c, 0, o);
        List<RunResult> runs = c.runs(o.runs(), run -> oneRun(c, run, o), r -> c.listener().finished(r.toJson(o)));
        return new Result(o, c.environment(), runs);
    }

    private RunResult oneRun(ScenarioRunner.Context c, int run, Options o) throws SQLException {
        int n = o.jobs();
        Queue<byte[]> queue = c.sluice().queue("bench.await-" + run);
        c.listener().phase(run, "enqueue " + n + " jobs");
        long[] ids = enqueue(queue, o);
        long deadline = System.nanoTime() + TIMEOUT.toNanos();

        c.listener().phase(run, n + " awaiters");
        AtomicLongArray called = unset(n);
        AtomicLongArray acked = unset(n);
        AtomicLongArray woke = unset(n);
        AtomicLong failed = new AtomicLong();
        AtomicReference<String> firstFailure = new AtomicReference<>();
        List<Thread> awaiters = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            int seq = i;
            Thread t = new Thread(() -> {
                try {
                    JobRun r = queue.await(ids[seq], TIMEOUT);
                    woke.set(seq, System.nanoTime());
                    if (r.status() != RunStatus.SUCCEEDED) {
                        throw new BenchmarkException("job " + ids[seq] + " ended " + r.status());
                    }
                } catch (RuntimeException e) {
                    failed.incrementAndGet();
                    firstFailure.compareAndSet(null, e.toString());
                }
            }, "bench-awaiter-" + i);
            t.setDaemon(true);
            awaiters.add(t);
        }
        long r0 = System.nanoTime();
        awaiters.forEach(Thread::start);
        awaitMarked(c, queue.name(), n, failed, deadline);
        double registerSeconds = (System.nanoTime() - r0) / 1e9;

        c.listener().phase(run, "acks");
        AtomicLong done = new AtomicLong();
        try (Worker w = queue.work(h -> {
            int seq = ByteBuffer.wrap(h.payloadBytes()).getInt(0);
            called.set(seq, System.nanoTime());
            if (h.ack()) {
                acked.set(seq, System.nanoTime());
            }
            done.incrementAndGet();
        }, WorkOptions.defaults().withConcurrency(o.workers()))) {
            while (done.get() < n && System.nanoTime() < deadline) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            }
            for (Thread t : awaiters) {
                join(t, deadline);
            }
        }
        return result(run, called, acked, woke, registerSeconds, failed.get(), firstFailure.get());
    }

    /** N times, each {@link #UNSET} until noted. */
    private static AtomicLongArray unset(int n) {
        long[] v = new long[n];
        Arrays.fill(v, UNSET);
        return new AtomicLongArray(v);
    }

    /** Enqueues the jobs in batches; job {@code seq} carries its number in the first four payload bytes. */
    private static long[] enqueue(Queue<byte[]> queue, Options o) {
        byte[] pad = Bench.randomBytes(o.payloadBytes());
        long[] ids = new long[o.jobs()];
        for (int from = 0; from < o.jobs(); from += 1000) {
            int to = Math.min(o.jobs(), from + 1000);
            List<NewJob<byte[]>> jobs = new ArrayList<>(to - from);
            for (int seq = from; seq < to; seq++) {
                jobs.add(NewJob.of(QueueEnqueue.payload(pad, seq)));
            }
            List<Long> got = queue.enqueueBatch(jobs);
            for (int k = 0; k < got.size(); k++) {
                ids[from + k] = got.get(k);
            }
        }
        return ids;
    }

    /**
     * Polls until the database shows all N jobs of the queue marked {@code awaited}: each awaiter marks its job after
     * registering for the wake-up, so this is the moment every awaiter is registered (a readiness check, not a sleep).
     */
    private static void awaitMarked(ScenarioRunner.Context c, String queue, int n, AtomicLong failed, long deadline)
            throws SQLException {
        Connection admin = c.admin();
        try (PreparedStatement ps = admin.prepareStatement("SELECT count(*) FROM " + Bench.quote(c.schema())
                + ".job WHERE queue = ? AND awaited")) {
            ps.setString(1, queue);
            while (true) {
                long marked;
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    marked = rs.getLong(1);
                }
                if (marked == n) {
                    return;
                }
                if (failed.get() > 0 || System.nanoTime() > deadline) {
                    throw new BenchmarkException("only " + marked + " of " + n + " jobs were marked awaited ("
                            + failed.get() + " awaiters failed)");
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
            }
        }
    }

    private static void join(Thread t, long deadline) {
        try {
            t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BenchmarkException("interrupted", e);
        }
    }

    /**
     * Latencies of the jobs with an ack and a wake-up time, sorted; quantiles by nearest rank (N is small: exact, no
     * histogram needed).
     */
    static RunResult result(int run, AtomicLongArray called, AtomicLongArray acked, AtomicLongArray woke,
                            double registerSeconds, long failed, String firstFailure) {
        int n = acked.length();
        double[] lat = new double[n];
        double[] fromCall = new double[n];
        double[] call = new double[n];
        int count = 0;
        long negative = 0;
        long firstAck = Long.MAX_VALUE;
        long lastAck = Long.MIN_VALUE;
        for (int i = 0; i < n; i++) {
            long a = acked.get(i);
            long w = woke.get(i);
            if (a == UNSET || w == UNSET) {
                continue;
            }
            firstAck = Math.min(firstAck, a);
            lastAck = Math.max(lastAck, a);
            if (w < a) {
                negative++;
            }
            lat[count] = Math.max(0, w - a) / 1e6;
            fromCall[count] = (w - called.get(i)) / 1e6;
            call[count] = (a - called.get(i)) / 1e6;
            count++;
        }
        double[] sorted = sorted(lat, count);
        double[] sortedFromCall = sorted(fromCall, count);
        return new RunResult(run, count, Bench.quantile(sorted, 0.50), Bench.quantile(sorted, 0.99),
                count == 0 ? Double.NaN : sorted[count - 1], negative, Bench.quantile(sortedFromCall, 0.50),
                Bench.quantile(sortedFromCall, 0.99), Bench.quantile(sorted(call, count), 0.50), registerSeconds,
                count < 2 ? Double.NaN : (lastAck - firstAck) / 1e9, failed, firstFailure);
    }

    private static double[] sorted(double[] values, int count) {
        double[] v = Arrays.copyOf(values, count);
        Arrays.sort(v);
        return v;
    }
}
