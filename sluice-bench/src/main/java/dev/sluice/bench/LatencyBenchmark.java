package dev.sluice.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.ConsumeOptions;
import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.GroupConfig;
import dev.sluice.Outcome;
import dev.sluice.ProduceOptions;
import dev.sluice.Producer;
import dev.sluice.ProducerConfig;
import dev.sluice.Sluice;
import dev.sluice.Stream;
import dev.sluice.StreamConfig;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;

/**
 * The {@code latency} benchmark: one producer sends R messages per second (default 200) at a fixed
 * rate for D seconds, so the consumer is idle between messages, and every message's latency from its
 * produce commit to the start of its handler is recorded: {@link System#nanoTime()} in the produce
 * future's completion (which runs right after the commit) against {@code nanoTime} at handler start,
 * joined by message id. The same run measures the same consumer twice: with LISTEN/NOTIFY wake-ups
 * (the default) and poll-only ({@code withWakeups(false)}, poll interval 1 s). The ratio is
 * p50 with wake-ups ÷ p50 poll-only; there is no external reference.
 *
 * <pre>{@code
 * ScenarioResult r = new LatencyBenchmark().run(LatencyBenchmark.Options.defaults());
 * }</pre>
 */
public final class LatencyBenchmark {
    /** The scenario name in results. */
    public static final String SCENARIO = "latency";
    /** The unit of {@code ours} and {@code reference}. */
    public static final String UNIT = "ms";
    /** The name of the reference: the same consumer without wake-ups. */
    public static final String REFERENCE = "poll-only";

    /**
     * What to run.
     *
     * @param databaseUrl  JDBC URL of the server to measure; {@code null} starts a temporary embedded one
     * @param rate         messages per second (default 200)
     * @param duration     measured window of each mode (default 20 s)
     * @param warmup       time each mode runs before the window opens (default 3 s)
     * @param payloadBytes payload size (default 1024)
     * @param pollInterval {@code ConsumeOptions.pollInterval} of the poll-only mode (default 1 s, the default of Sluice)
     * @param runs         how many times to measure both modes; medians are reported (default 1)
     */
    public record Options(String databaseUrl, int rate, Duration duration, Duration warmup, int payloadBytes,
                          Duration pollInterval, int runs) {
        public Options {
            Objects.requireNonNull(duration, "duration");
            Objects.requireNonNull(warmup, "warmup");
            Objects.requireNonNull(pollInterval, "pollInterval");
            if (rate < 1 || rate > 10_000) {
                throw new IllegalArgumentException("rate must be between 1 and 10000 msgs/s (got " + rate + ")");
            }
            if (duration.compareTo(Duration.ofSeconds(1)) < 0) {
                throw new IllegalArgumentException("duration must be at least 1s (got " + duration + ")");
            }
            if (warmup.isNegative()) {
                throw new IllegalArgumentException("warmup must not be negative (got " + warmup + ")");
            }
            if (payloadBytes < 1 || payloadBytes > StreamConfig.DEFAULT_MAX_PAYLOAD_BYTES) {
                throw new IllegalArgumentException("payload bytes must be between 1 and "
                        + StreamConfig.DEFAULT_MAX_PAYLOAD_BYTES + " (got " + payloadBytes + ")");
            }
            if (pollInterval.compareTo(Duration.ofMillis(10)) < 0) {
                throw new IllegalArgumentException("poll interval must be at least 10ms (got " + pollInterval + ")");
            }
            if (runs < 1 || runs > 100) {
                throw new IllegalArgumentException("runs must be between 1 and 100 (got " + runs + ")");
            }
            if (databaseUrl != null && databaseUrl.isBlank()) {
                databaseUrl = null;
            }
        }

        /** The defaults: embedded server, 200 msgs/s, 20 s after 3 s per mode, 1 KB, poll-only every 1 s, 1 run. */
        public static Options defaults() {
            return new Options(null, 200, Duration.ofSeconds(20), Duration.ofSeconds(3), 1024, Duration.ofSeconds(1), 1);
        }

        public Options withDatabaseUrl(String url) {
            return new Options(url, rate, duration, warmup, payloadBytes, pollInterval, runs);
        }

        public Options withRate(int n) {
            return new Options(databaseUrl, n, duration, warmup, payloadBytes, pollInterval, runs);
        }

        public Options withDuration(Duration d) {
            return new Options(databaseUrl, rate, d, warmup, payloadBytes, pollInterval, runs);
        }

        public Options withWarmup(Duration d) {
            return new Options(databaseUrl, rate, duration, d, payloadBytes, pollInterval, runs);
        }

        public Options withPayloadBytes(int n) {
            return new Options(databaseUrl, rate, duration, warmup, n, pollInterval, runs);
        }

        public Options withPollInterval(Duration d) {
            return new Options(databaseUrl, rate, duration, warmup, payloadBytes, d, runs);
        }

        public Options withRuns(int n) {
            return new Options(databaseUrl, rate, duration, warmup, payloadBytes, pollInterval, n);
        }
    }

    /**
     * The latencies of one mode.
     *
     * @param messages   messages committed inside the window (each one measured)
     * @param achievedRate messages committed per second in the window
     * @param p50Ms      median produce-commit → handler-start latency
     * @param p95Ms      95th percentile
     * @param p99Ms      99th percentile
     * @param maxMs      largest
     * @param early      handlers that started before the produce future completed (counted as 0 ms)
     * @param lost       messages committed in the window that never reached a handler (must be 0)
     */
    public record Latencies(long messages, double achievedRate, double p50Ms, double p95Ms, double p99Ms, double maxMs,
                            long early, long lost) {
        Map<String, Object> toJson(String prefix) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put(prefix + "p50_ms", BenchJson.round(p50Ms, 2));
            m.put(prefix + "p95_ms", BenchJson.round(p95Ms, 2));
            m.put(prefix + "p99_ms", BenchJson.round(p99Ms, 2));
            m.put(prefix + "max_ms", BenchJson.round(maxMs, 2));
            m.put(prefix + "messages", messages);
            m.put(prefix + "rate_per_s", BenchJson.round(achievedRate, 1));
            m.put(prefix + "early", early);
            m.put(prefix + "lost", lost);
            return m;
        }
    }

    /**
     * One run: both modes.
     *
     * @param run      1-based run number
     * @param wakeups  with LISTEN/NOTIFY wake-ups (the default consumer)
     * @param pollOnly the same consumer with {@code withWakeups(false)}
     */
    public record RunResult(int run, Latencies wakeups, Latencies pollOnly) {
        /** p50 with wake-ups ÷ p50 poll-only. */
        public double ratio() {
            return wakeups.p50Ms() / pollOnly.p50Ms();
        }

        Map<String, Object> toJson(Options o) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("scenario", SCENARIO);
            m.put("kind", "run");
            m.put("run", run);
            m.put("ours", BenchJson.round(wakeups.p50Ms(), 2));
            m.put("reference", BenchJson.round(pollOnly.p50Ms(), 2));
            m.put("reference_name", REFERENCE);
            m.put("ratio", BenchJson.round(ratio(), 4));
            m.put("unit", UNIT);
            m.put("duration_s", o.duration().toNanos() / 1e9);
            m.putAll(wakeups.toJson(""));
            m.putAll(pollOnly.toJson("poll_only_"));
            return m;
        }
    }

    /**
     * The outcome: every run and the medians.
     *
     * @param options     what was run
     * @param environment where it ran
     * @param runs        each run, in order
     */
    public record Result(Options options, ProduceBenchmark.Environment environment, List<RunResult> runs)
            implements ScenarioResult {
        public Result {
            runs = List.copyOf(runs);
        }

        /** Median p50 with wake-ups. */
        public double p50Ms() {
            return Bench.median(runs, r -> r.wakeups().p50Ms());
        }

        /** Median p50 poll-only. */
        public double pollOnlyP50Ms() {
            return Bench.median(runs, r -> r.pollOnly().p50Ms());
        }

        /** Median of the per-run ratios. */
        public double ratio() {
            return Bench.median(runs, RunResult::ratio);
        }

        @Override
        public List<Map<String, Object>> runLines() {
            return runs.stream().map(r -> r.toJson(options)).toList();
        }

        @Override
        public Map<String, Object> summary() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("scenario", SCENARIO);
            m.put("kind", "summary");
            m.put("ours", BenchJson.round(p50Ms(), 2));
            m.put("reference", BenchJson.round(pollOnlyP50Ms(), 2));
            m.put("reference_name", REFERENCE);
            m.put("ratio", BenchJson.round(ratio(), 4));
            m.put("unit", UNIT);
            Bench.putEnvironment(m, environment);
            m.put("duration_s", options.duration().toNanos() / 1e9);
            m.put("p50_ms", BenchJson.round(p50Ms(), 2));
            m.put("p95_ms", BenchJson.round(Bench.median(runs, r -> r.wakeups().p95Ms()), 2));
            m.put("p99_ms", BenchJson.round(Bench.median(runs, r -> r.wakeups().p99Ms()), 2));
            m.put("poll_only_p50_ms", BenchJson.round(pollOnlyP50Ms(), 2));
            m.put("poll_only_p95_ms", BenchJson.round(Bench.median(runs, r -> r.pollOnly().p95Ms()), 2));
            m.put("poll_only_p99_ms", BenchJson.round(Bench.median(runs, r -> r.pollOnly().p99Ms()), 2));
            m.put("rate_per_s", options.rate());
            m.put("poll_interval_ms", options.pollInterval().toMillis());
            m.put("warmup_s", options.warmup().toNanos() / 1e9);
            m.put("payload_bytes", options.payloadBytes());
            m.put("runs", runs.size());
            m.put("embedded", environment.embedded());
            m.put("lost", runs.stream().mapToLong(r -> r.wakeups().lost() + r.pollOnly().lost()).sum());
            return m;
        }

        @Override
        public List<String> problems() {
            List<String> p = new ArrayList<>();
            for (RunResult r : runs) {
                if (r.wakeups().lost() + r.pollOnly().lost() != 0) {
                    p.add("run " + r.run() + ": " + (r.wakeups().lost() + r.pollOnly().lost())
                            + " committed messages never reached a handler");
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
        Objects.requireNonNull(listener, "listener");
        return Bench.onServer(options.databaseUrl(), (url, embedded) -> runOn(url, embedded, options, listener));
    }

    private Result runOn(String url, boolean embedded, Options o, ScenarioListener listener) throws SQLException {
        DataSource ds = Bench.dataSource(url);
        String schema = Bench.schemaName();
        try (Connection admin = ds.getConnection()) {
            admin.setAutoCommit(true);
            ProduceBenchmark.Environment env = Bench.environment(admin, embedded, schema);
            listener.started(env);
            List<RunResult> runs = new ArrayList<>();
            try {
                ProducerConfig producerConfig = ProducerConfig.defaults();
                // The producer's transactions in flight, the claim loop and a completing handler, the
                // LISTEN session connection, and one spare.
                try (HikariDataSource pool = Bench.pool(ds, producerConfig.maxInFlight() + 4, "sluice-bench");
                     Sluice sluice = Sluice.builder().dataSource(pool).schema(schema).allowDestroy(true)
                             .clientId("sluice-bench").build()) {
                    for (int run = 1; run <= o.runs(); run++) {
                        listener.phase(run, "wake-ups");
                        Latencies wake = measure(sluice, admin, run, true, o);
                        listener.phase(run, REFERENCE);
                        Latencies poll = measure(sluice, admin, run, false, o);
                        RunResult r = new RunResult(run, wake, poll);
                        runs.add(r);
                        listener.finished(r.toJson(o));
                    }
                }
            } catch (Throwable e) {
                Bench.dropSchemaAfter(e, admin, schema);
                throw e;
            }
            Bench.dropSchema(admin, schema);
            return new Result(o, env, runs);
        }
    }

    private Latencies measure(Sluice sluice, Connection admin, int run, boolean wakeups, Options o) {
        Stream<byte[]> stream = sluice.stream("bench.latency-" + run + (wakeups ? "-wakeups" : "-poll"));
        stream.register(StreamConfig.defaults());
        ConsumerGroup<byte[]> group = stream.consumerGroup("g");
        group.register(GroupConfig.defaults());
        Bench.checkpoint(admin);

        // id -> nanoTime: when the produce future completed (the commit), when the handler started.
        Map<Long, Long> committedAt = new ConcurrentHashMap<>();
        Map<Long, Long> startedAt = new ConcurrentHashMap<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicLong pending = new AtomicLong();
        byte[] payload = Bench.randomBytes(o.payloadBytes());
        ConsumeOptions options = ConsumeOptions.defaults().withWakeups(wakeups).withPollInterval(o.pollInterval());
        long start;
        long windowStart;
        long windowEnd;
        try (Consumption consumption = group.consume(m -> {
            startedAt.putIfAbsent(m.id(), System.nanoTime());
            return Outcome.success();
        }, options); Producer<byte[]> producer = stream.producer()) {
            ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "bench-latency-producer");
                t.setDaemon(true);
                return t;
            });
            start = System.nanoTime();
            windowStart = start + o.warmup().toNanos();
            windowEnd = windowStart + o.duration().toNanos();
            try {
                // A fixed rate, independent of how long commits take: produceAsync does not wait.
                ticker.scheduleAtFixedRate(() -> {
                    pending.incrementAndGet();
                    producer.produceAsync(payload, ProduceOptions.NONE).whenComplete((p, e) -> {
                        long now = System.nanoTime();
                        if (e != null) {
                            failure.compareAndSet(null, e);
                        } else {
                            committedAt.put(p.id(), now);
                        }
                        pending.decrementAndGet();
                    });
                }, 0, 1_000_000_000L / o.rate(), TimeUnit.NANOSECONDS);
                while (System.nanoTime() < windowEnd) {
                    LockSupport.parkNanos(windowEnd - System.nanoTime());
                }
            } finally {
                ticker.shutdownNow();
            }
            // Let the last produces commit, then give the consumer time to hand every message to a handler.
            waitUntil(() -> pending.get() == 0, TimeUnit.SECONDS.toNanos(30));
            long drainNanos = 3 * o.pollInterval().toNanos() + TimeUnit.SECONDS.toNanos(10);
            waitUntil(() -> startedAt.keySet().containsAll(committedAt.keySet()), drainNanos);
        }
        stream.destroy(true);
        if (failure.get() != null) {
            throw new BenchmarkException("a produce failed: " + failure.get(), failure.get());
        }
        List<Double> ms = new ArrayList<>();
        long early = 0;
        long lost = 0;
        for (Map.Entry<Long, Long> e : committedAt.entrySet()) {
            long committed = e.getValue();
            if (committed < windowStart || committed >= windowEnd) {
                continue;
            }
            Long started = startedAt.get(e.getKey());
            if (started == null) {
                lost++;
                continue;
            }
            long nanos = started - committed;
            if (nanos < 0) {
                // The handler ran before the producer's future completed: the commit came first.
                early++;
                nanos = 0;
            }
            ms.add(nanos / 1e6);
        }
        if (ms.isEmpty()) {
            throw new BenchmarkException("no message was produced and delivered inside the window (" + (wakeups
                    ? "wake-ups" : "poll-only") + ")");
        }
        double[] sorted = ms.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        long messages = sorted.length + lost;
        return new Latencies(messages, messages / (o.duration().toNanos() / 1e9), Bench.quantile(sorted, 0.50),
                Bench.quantile(sorted, 0.95), Bench.quantile(sorted, 0.99), sorted[sorted.length - 1], early, lost);
    }

    private static void waitUntil(java.util.function.BooleanSupplier done, long timeoutNanos) {
        long deadline = System.nanoTime() + timeoutNanos;
        while (!done.getAsBoolean() && System.nanoTime() < deadline) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
    }
}
