package dev.sluice.bench;

import dev.sluice.ProducerConfig;
import dev.sluice.StreamConfig;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The {@code latency} benchmark: one producer sends R messages per second (default 200) at a fixed
 * rate for D seconds, so the consumer is idle between messages, and every message's latency from its
 * produce commit to the start of its handler is recorded: {@link System#nanoTime()} in the produce
 * future's completion (which runs right after the commit) against {@code nanoTime} at handler start,
 * joined by message id. The same run measures the same consumer twice: with LISTEN/NOTIFY wake-ups
 * (the default) and poll-only ({@code withWakeups(false)}, poll interval 1 s). The ratio is
 * p50 with wake-ups ÷ p50 poll-only; there is no external reference.
 *
 * <p>With {@link Options#withPinXminFor pinXminFor} P, the wake-ups mode goes on after its window: once
 * every message of the window reached a handler, an unrelated transaction ({@link XidPin}: its own
 * connection, an allocated xid, idle, no table touched) holds the server's xmin for P while the producer
 * keeps its rate, and the messages committed under the pin are measured as well ({@code pinned_*});
 * those whose handler had not started 5 s after the pin's rollback are {@code pinned_lost}. The window
 * before the pin is the unpinned figure the pinned p99 is compared with ({@code pinned_p99_ratio}).
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
    /** What {@code pg_stat_activity.application_name} shows for the connection that pins the xmin. */
    public static final String PIN_APPLICATION_NAME = "sluice-bench-pin";
    /** The shortest pin. */
    static final Duration MIN_PIN = Duration.ofSeconds(1);

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
     * @param pinXminFor   after the wake-ups window, how long an unrelated transaction holds the server's xmin
     *                     while the measurement goes on ({@link Duration#ZERO}, the default: no pin)
     */
    public record Options(String databaseUrl, int rate, Duration duration, Duration warmup, int payloadBytes,
                          Duration pollInterval, int runs, Duration pinXminFor) {
        public Options {
            Objects.requireNonNull(duration, "duration");
            Objects.requireNonNull(warmup, "warmup");
            Objects.requireNonNull(pollInterval, "pollInterval");
            Objects.requireNonNull(pinXminFor, "pinXminFor");
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
            if (!pinXminFor.isZero() && pinXminFor.compareTo(MIN_PIN) < 0) {
                throw new IllegalArgumentException("the xmin pin must last at least 1s (got " + pinXminFor + ")");
            }
            if (databaseUrl != null && databaseUrl.isBlank()) {
                databaseUrl = null;
            }
        }

        /** The defaults: embedded server, 200 msgs/s, 20 s after 3 s per mode, 1 KB, poll-only every 1 s, 1 run, no pin. */
        public static Options defaults() {
            return new Options(null, 200, Duration.ofSeconds(20), Duration.ofSeconds(3), 1024, Duration.ofSeconds(1), 1,
                    Duration.ZERO);
        }

        /** Whether the run pins the server's xmin ({@link #pinXminFor()} is set). */
        public boolean pinned() {
            return !pinXminFor.isZero();
        }

        public Options withDatabaseUrl(String url) {
            return new Options(url, rate, duration, warmup, payloadBytes, pollInterval, runs, pinXminFor);
        }

        public Options withRate(int n) {
            return new Options(databaseUrl, n, duration, warmup, payloadBytes, pollInterval, runs, pinXminFor);
        }

        public Options withDuration(Duration d) {
            return new Options(databaseUrl, rate, d, warmup, payloadBytes, pollInterval, runs, pinXminFor);
        }

        public Options withWarmup(Duration d) {
            return new Options(databaseUrl, rate, duration, d, payloadBytes, pollInterval, runs, pinXminFor);
        }

        public Options withPayloadBytes(int n) {
            return new Options(databaseUrl, rate, duration, warmup, n, pollInterval, runs, pinXminFor);
        }

        public Options withPollInterval(Duration d) {
            return new Options(databaseUrl, rate, duration, warmup, payloadBytes, d, runs, pinXminFor);
        }

        public Options withRuns(int n) {
            return new Options(databaseUrl, rate, duration, warmup, payloadBytes, pollInterval, n, pinXminFor);
        }

        /**
         * Pins the server's xmin for {@code d} after the wake-ups window (see the class comment).
         *
         * @throws IllegalArgumentException unless {@code d} is at least 1 s (zero included: leave the pin out instead)
         */
        public Options withPinXminFor(Duration d) {
            if (Duration.ZERO.equals(d)) {
                throw new IllegalArgumentException("the xmin pin must last at least 1s (got " + d + ")");
            }
            return new Options(databaseUrl, rate, duration, warmup, payloadBytes, pollInterval, runs, d); // checks the rest
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
            m.put(prefix + "p50_ms", figure(p50Ms, 2));
            m.put(prefix + "p95_ms", figure(p95Ms, 2));
            m.put(prefix + "p99_ms", figure(p99Ms, 2));
            m.put(prefix + "max_ms", figure(maxMs, 2));
            m.put(prefix + "messages", messages);
            m.put(prefix + "rate_per_s", BenchJson.round(achievedRate, 1));
            m.put(prefix + "early", early);
            m.put(prefix + "lost", lost);
            return m;
        }
    }

    /**
     * What the xmin pin of a run did.
     *
     * @param xid         its transaction id ({@code xid8}), as {@code pg_current_xact_id()} returned it
     * @param heldSeconds from the id's allocation to the rollback
     * @param held        whether another session still saw the pin's backend holding that id just before the
     *                    rollback (if not, the server ended the transaction early and the pinned figures are void)
     */
    public record Pin(long xid, double heldSeconds, boolean held) {
    }

    /**
     * One run: both modes.
     *
     * @param run      1-based run number
     * @param wakeups  with LISTEN/NOTIFY wake-ups (the default consumer)
     * @param pollOnly the same consumer with {@code withWakeups(false)}
     * @param pinned   the wake-ups consumer's messages committed while the xmin was pinned (null without a pin)
     * @param pin      the pin (null without one)
     */
    public record RunResult(int run, Latencies wakeups, Latencies pollOnly, Latencies pinned, Pin pin) {
        /** A run without a pin. */
        public RunResult(int run, Latencies wakeups, Latencies pollOnly) {
            this(run, wakeups, pollOnly, null, null);
        }

        /** p50 with wake-ups ÷ p50 poll-only. */
        public double ratio() {
            return wakeups.p50Ms() / pollOnly.p50Ms();
        }

        /** p99 under the pin ÷ p99 of the window before it (same consumer, same run); NaN without a pin. */
        public double pinnedP99Ratio() {
            return pinned == null ? Double.NaN : pinned.p99Ms() / wakeups.p99Ms();
        }

        Map<String, Object> toJson(Options o) {
            Map<String, Object> m = BenchJson.putFigures(BenchJson.runLine(SCENARIO, run),
                    BenchJson.round(wakeups.p50Ms(), 2), BenchJson.round(pollOnly.p50Ms(), 2), REFERENCE,
                    BenchJson.round(ratio(), 4), UNIT);
            m.put("duration_s", o.duration().toNanos() / 1e9);
            m.putAll(wakeups.toJson(""));
            m.putAll(pollOnly.toJson("poll_only_"));
            if (pinned != null) {
                m.put("pin_xmin_for_s", o.pinXminFor().toNanos() / 1e9);
                m.put("pin_xid", pin.xid());
                m.put("pin_held_s", BenchJson.round(pin.heldSeconds(), 3));
                m.put("pin_held", pin.held());
                m.put("pin_grace_s", LatencyPhase.PIN_GRACE.toNanos() / 1e9);
                m.putAll(pinned.toJson("pinned_"));
                m.put("pinned_p99_ratio", figure(pinnedP99Ratio(), 3));
            }
            return m;
        }
    }

    /** A figure for JSON, rounded; null when there is none (NaN: no message to measure). */
    static Double figure(double value, int decimals) {
        return Double.isNaN(value) ? null : BenchJson.round(value, decimals);
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
            Map<String, Object> m = BenchJson.summaryLine(SCENARIO, BenchJson.round(p50Ms(), 2),
                    BenchJson.round(pollOnlyP50Ms(), 2), REFERENCE, BenchJson.round(ratio(), 4), UNIT, environment);
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
            if (options.pinned()) {
                m.put("pin_xmin_for_s", options.pinXminFor().toNanos() / 1e9);
                m.put("pin_grace_s", LatencyPhase.PIN_GRACE.toNanos() / 1e9);
                m.put("pinned_p50_ms", figure(Bench.median(runs, r -> r.pinned().p50Ms()), 2));
                m.put("pinned_p95_ms", figure(Bench.median(runs, r -> r.pinned().p95Ms()), 2));
                m.put("pinned_p99_ms", figure(Bench.median(runs, r -> r.pinned().p99Ms()), 2));
                m.put("pinned_p99_ratio", figure(Bench.median(runs, RunResult::pinnedP99Ratio), 3));
                m.put("pinned_messages", runs.stream().mapToLong(r -> r.pinned().messages()).sum());
                m.put("pinned_lost", runs.stream().mapToLong(r -> r.pinned().lost()).sum());
            }
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
                if (r.pin() != null && !r.pin().held()) {
                    p.add("run " + r.run() + ": the pin's transaction (xid " + r.pin().xid() + ") had ended before its"
                            + " time was up (idle_in_transaction_session_timeout?); the pinned figures are void");
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
        // The producer's transactions in flight, the claim loop and a completing handler, the LISTEN
        // session connection, and one spare.
        int poolSize = ProducerConfig.defaults().maxInFlight() + 4;
        return ScenarioRunner.run(ScenarioRunner.Setup.of(options.databaseUrl(), "the benchmark", poolSize), listener,
                c -> measure(c, options));
    }

    private Result measure(ScenarioRunner.Context c, Options o) throws SQLException {
        List<RunResult> runs = c.runs(o.runs(), run -> {
            c.listener().phase(run, "wake-ups");
            LatencyPhase.Measured wake = LatencyPhase.measure(c.sluice(), c.admin(), c.url(), run, true, o.pinned(), o,
                    c.listener());
            c.listener().phase(run, REFERENCE);
            LatencyPhase.Measured poll = LatencyPhase.measure(c.sluice(), c.admin(), c.url(), run, false, false, o,
                    c.listener());
            return new RunResult(run, wake.window(), poll.window(), wake.pinned(), wake.pin());
        }, r -> c.listener().finished(r.toJson(o)));
        return new Result(o, c.environment(), runs);
    }
}
