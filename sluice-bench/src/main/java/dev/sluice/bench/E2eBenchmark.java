package dev.sluice.bench;

import dev.sluice.ProducerConfig;
import dev.sluice.StreamConfig;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The {@code e2e} and {@code fanout} benchmarks: producers and consumers of one stream run together
 * for D seconds. {@code e2e} has one consumer group; {@code fanout} has G groups (default 4) that each
 * receive every message. Our figure is the sustained rate: per group the smaller of the produce rate
 * and that group's consume rate, summed over the groups (for e2e simply min(produced/s, consumed/s)).
 * Beside it the backlog slope: the least-squares trend of (produced - consumed) over samples taken
 * every 500 ms in the window; a consumer that keeps up has a slope near 0.
 *
 * <p>The reference, measured in the same run on the same server right after ours: {@code raw-insert}
 * (the produce benchmark's reference: batched {@code INSERT ... SELECT * FROM unnest(...)} over as many
 * connections as the producer keeps transactions in flight, with the mean rows per transaction ours
 * reached) into an unpartitioned table with the log's columns, running concurrently with G
 * {@code raw-range-read} readers, each looping {@code SELECT ... WHERE id > cursor ORDER BY id LIMIT B}
 * and {@code UPDATE} of its cursor row in the same transaction. Its sustained rate is computed the
 * same way from its own samples; {@code ratio} = ours ÷ reference.
 *
 * <p>This class holds what is run and reported; {@link E2eOurs} measures our side of a run and
 * {@link E2eReference} the reference.
 *
 * <pre>{@code
 * ScenarioResult r = new E2eBenchmark().run(E2eBenchmark.Options.e2e());
 * System.out.println(BenchJson.line(r.summary()));
 * }</pre>
 */
public final class E2eBenchmark {
    /** Scenario name of one group. */
    public static final String E2E = "e2e";
    /** Scenario name of G groups. */
    public static final String FANOUT = "fanout";
    /** The unit of {@code ours} and {@code reference}. */
    public static final String UNIT = "msgs/s";
    /** The name of the reference. */
    public static final String REFERENCE = "raw-insert + raw-range-read";

    /** How often both phases sample their counters. */
    static final Duration SAMPLE_PERIOD = Duration.ofMillis(500);

    /**
     * What to run.
     *
     * @param scenario           {@value #E2E} or {@value #FANOUT} (names the result only; {@code groups} decides)
     * @param databaseUrl        JDBC URL of the server to measure; {@code null} starts a temporary embedded one
     * @param groups             consumer groups on the stream (e2e: 1; fanout default 4)
     * @param callers            producer threads sharing one producer (default 8)
     * @param inFlight           {@code produceAsync} calls each producer thread keeps in flight (default 4)
     * @param duration           measured window of each phase (default 20 s)
     * @param warmup             time each phase runs before the window opens (default 3 s)
     * @param payloadBytes       payload size (default 1024)
     * @param consumeBatch       {@code ConsumeOptions.batchSize} of every group, and the reference readers' LIMIT (default 256)
     * @param consumeConcurrency {@code ConsumeOptions.concurrency} of every group (default 8)
     * @param runs               how many times to repeat ours and the reference; medians are reported (default 1)
     */
    public record Options(String scenario, String databaseUrl, int groups, int callers, int inFlight, Duration duration,
                          Duration warmup, int payloadBytes, int consumeBatch, int consumeConcurrency, int runs) {
        public Options {
            Objects.requireNonNull(scenario, "scenario");
            Objects.requireNonNull(duration, "duration");
            Objects.requireNonNull(warmup, "warmup");
            if (!scenario.equals(E2E) && !scenario.equals(FANOUT)) {
                throw new IllegalArgumentException("scenario must be e2e or fanout (got " + scenario + ")");
            }
            if (groups < 1 || groups > 64) {
                throw new IllegalArgumentException("groups must be between 1 and 64 (got " + groups + ")");
            }
            if (callers < 1 || callers > 1024) {
                throw new IllegalArgumentException("callers must be between 1 and 1024 (got " + callers + ")");
            }
            if (inFlight < 1 || inFlight > 1024) {
                throw new IllegalArgumentException("in-flight must be between 1 and 1024 (got " + inFlight + ")");
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
            if (consumeBatch < 1 || consumeBatch > 10_000) {
                throw new IllegalArgumentException("consume batch must be between 1 and 10000 (got " + consumeBatch + ")");
            }
            if (consumeConcurrency < 1 || consumeConcurrency > 1024) {
                throw new IllegalArgumentException("concurrency must be between 1 and 1024 (got " + consumeConcurrency + ")");
            }
            if (runs < 1 || runs > 100) {
                throw new IllegalArgumentException("runs must be between 1 and 100 (got " + runs + ")");
            }
            if (databaseUrl != null && databaseUrl.isBlank()) {
                databaseUrl = null;
            }
        }

        /** e2e defaults: embedded server, 1 group, 8 callers × 4 in flight, 20 s after 3 s, 1 KB, batch 256, concurrency 8. */
        public static Options e2e() {
            return new Options(E2E, null, 1, 8, 4, Duration.ofSeconds(20), Duration.ofSeconds(3), 1024, 256, 8, 1);
        }

        /** fanout defaults: as {@link #e2e()} with 4 groups. */
        public static Options fanout() {
            return new Options(FANOUT, null, 4, 8, 4, Duration.ofSeconds(20), Duration.ofSeconds(3), 1024, 256, 8, 1);
        }

        public Options withDatabaseUrl(String url) {
            return new Options(scenario, url, groups, callers, inFlight, duration, warmup, payloadBytes, consumeBatch,
                    consumeConcurrency, runs);
        }

        public Options withGroups(int n) {
            return new Options(scenario, databaseUrl, n, callers, inFlight, duration, warmup, payloadBytes, consumeBatch,
                    consumeConcurrency, runs);
        }

        public Options withCallers(int n) {
            return new Options(scenario, databaseUrl, groups, n, inFlight, duration, warmup, payloadBytes, consumeBatch,
                    consumeConcurrency, runs);
        }

        public Options withInFlight(int n) {
            return new Options(scenario, databaseUrl, groups, callers, n, duration, warmup, payloadBytes, consumeBatch,
                    consumeConcurrency, runs);
        }

        public Options withDuration(Duration d) {
            return new Options(scenario, databaseUrl, groups, callers, inFlight, d, warmup, payloadBytes, consumeBatch,
                    consumeConcurrency, runs);
        }

        public Options withWarmup(Duration d) {
            return new Options(scenario, databaseUrl, groups, callers, inFlight, duration, d, payloadBytes, consumeBatch,
                    consumeConcurrency, runs);
        }

        public Options withPayloadBytes(int n) {
            return new Options(scenario, databaseUrl, groups, callers, inFlight, duration, warmup, n, consumeBatch,
                    consumeConcurrency, runs);
        }

        public Options withConsumeBatch(int n) {
            return new Options(scenario, databaseUrl, groups, callers, inFlight, duration, warmup, payloadBytes, n,
                    consumeConcurrency, runs);
        }

        public Options withConsumeConcurrency(int n) {
            return new Options(scenario, databaseUrl, groups, callers, inFlight, duration, warmup, payloadBytes,
                    consumeBatch, n, runs);
        }

        public Options withRuns(int n) {
            return new Options(scenario, databaseUrl, groups, callers, inFlight, duration, warmup, payloadBytes,
                    consumeBatch, consumeConcurrency, n);
        }
    }

    /**
     * One run: ours, then the reference.
     *
     * @param run                 1-based run number
     * @param ours                our sustained msgs/s: Σ over groups of min(produced/s, consumed/s of the group)
     * @param reference           the reference's sustained rows/s, computed the same way
     * @param ratio               ours ÷ reference
     * @param producedPerSecond   messages committed by our producers per second in the window
     * @param consumedPerSecond   distinct messages our handlers received per second in the window, summed over groups
     * @param backlogSlope        our backlog trend in msgs/s (the largest over the groups)
     * @param referenceInsertPerSecond rows committed by the reference inserters per second in the window
     * @param referenceReadPerSecond   ids the reference readers' cursors advanced per second, summed over readers
     * @param referenceBacklogSlope    the reference's backlog trend (the largest over the readers)
     * @param batchSize           mean messages per producing transaction in our window (from {@code xmin})
     * @param referenceBatchSize  mean rows per reference insert transaction (matches {@code batchSize})
     * @param meanRange           mean messages per range our consumers claimed (deliveries ÷ ranges claimed)
     * @param produced            messages our producers saw committed in the whole phase
     * @param lost                (group, message) pairs committed but never delivered after the drain (must be 0)
     * @param duplicates          deliveries of a message a group had already received (at-least-once allows them)
     * @param drained             whether every group caught up after the producers stopped (within the drain timeout)
     * @param referenceSkipped    rows the reference readers stepped over (ids committed late below their cursor):
     *                            the reference does not fence its reads, which makes it faster than a correct reader
     * @param undrained           when not drained: where the undelivered messages were (cursor, leases, rows), else null
     */
    public record RunResult(int run, double ours, double reference, double ratio, double producedPerSecond,
                            double consumedPerSecond, double backlogSlope, double referenceInsertPerSecond,
                            double referenceReadPerSecond, double referenceBacklogSlope, double batchSize,
                            double referenceBatchSize, double meanRange, long produced, long lost, long duplicates,
                            boolean drained, long referenceSkipped, String undrained) {

        Map<String, Object> toJson(Options o) {
            Map<String, Object> m = BenchJson.putFigures(BenchJson.runLine(o.scenario(), run),
                    BenchJson.round(ours, 1), BenchJson.round(reference, 1), REFERENCE, BenchJson.round(ratio, 3), UNIT);
            m.put("duration_s", o.duration().toNanos() / 1e9);
            m.put("produced_per_s", BenchJson.round(producedPerSecond, 1));
            m.put("consumed_per_s", BenchJson.round(consumedPerSecond, 1));
            m.put("backlog_slope_per_s", BenchJson.round(backlogSlope, 1));
            m.put("groups", o.groups());
            m.put("reference_insert_per_s", BenchJson.round(referenceInsertPerSecond, 1));
            m.put("reference_read_per_s", BenchJson.round(referenceReadPerSecond, 1));
            m.put("reference_backlog_slope_per_s", BenchJson.round(referenceBacklogSlope, 1));
            m.put("batch_size", BenchJson.round(batchSize, 2));
            m.put("reference_batch_size", BenchJson.round(referenceBatchSize, 2));
            m.put("mean_claimed_range", BenchJson.round(meanRange, 1));
            m.put("produced", produced);
            m.put("lost", lost);
            m.put("duplicates", duplicates);
            m.put("drained", drained);
            m.put("reference_skipped", referenceSkipped);
            if (undrained != null) {
                m.put("undrained", undrained);
            }
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

        /** Median of our sustained msgs/s. */
        public double ours() {
            return Bench.median(runs, RunResult::ours);
        }

        /** Median of the reference's sustained rows/s. */
        public double reference() {
            return Bench.median(runs, RunResult::reference);
        }

        /** Median of the per-run ratios (each pairs two phases measured back to back). */
        public double ratio() {
            return Bench.median(runs, RunResult::ratio);
        }

        /** Median of our backlog slopes. */
        public double backlogSlope() {
            return Bench.median(runs, RunResult::backlogSlope);
        }

        /** Lost (group, message) pairs over all runs; must be 0. */
        public long lost() {
            return runs.stream().mapToLong(RunResult::lost).sum();
        }

        @Override
        public List<Map<String, Object>> runLines() {
            return runs.stream().map(r -> r.toJson(options)).toList();
        }

        @Override
        public Map<String, Object> summary() {
            Map<String, Object> m = BenchJson.summaryLine(options.scenario(), BenchJson.round(ours(), 1),
                    BenchJson.round(reference(), 1), REFERENCE, BenchJson.round(ratio(), 3), UNIT, environment);
            m.put("duration_s", options.duration().toNanos() / 1e9);
            m.put("produced_per_s", BenchJson.round(Bench.median(runs, RunResult::producedPerSecond), 1));
            m.put("consumed_per_s", BenchJson.round(Bench.median(runs, RunResult::consumedPerSecond), 1));
            m.put("backlog_slope_per_s", BenchJson.round(backlogSlope(), 1));
            m.put("groups", options.groups());
            m.put("warmup_s", options.warmup().toNanos() / 1e9);
            m.put("callers", options.callers());
            m.put("in_flight_per_caller", options.inFlight());
            m.put("payload_bytes", options.payloadBytes());
            m.put("consume_batch", options.consumeBatch());
            m.put("consume_concurrency", options.consumeConcurrency());
            m.put("batch_size", BenchJson.round(Bench.median(runs, RunResult::batchSize), 2));
            m.put("reference_insert_per_s", BenchJson.round(Bench.median(runs, RunResult::referenceInsertPerSecond), 1));
            m.put("reference_read_per_s", BenchJson.round(Bench.median(runs, RunResult::referenceReadPerSecond), 1));
            m.put("reference_backlog_slope_per_s", BenchJson.round(Bench.median(runs, RunResult::referenceBacklogSlope), 1));
            m.put("runs", runs.size());
            m.put("embedded", environment.embedded());
            m.put("lost", lost());
            return m;
        }

        @Override
        public List<String> problems() {
            List<String> p = new ArrayList<>();
            for (RunResult r : runs) {
                if (!r.drained()) {
                    p.add("run " + r.run() + ": the consumers did not catch up within the drain timeout");
                }
                if (r.lost() != 0) {
                    p.add("run " + r.run() + ": " + r.lost() + " committed messages were never delivered");
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
        // The producer's transactions in flight, per group a claim loop and a completing handler at once,
        // the client's LISTEN session connection, and one spare.
        int poolSize = ProducerConfig.defaults().maxInFlight() + 2 * options.groups() + 2;
        return ScenarioRunner.run(ScenarioRunner.Setup.of(options.databaseUrl(), "the benchmark", poolSize), listener,
                c -> measure(c, options));
    }

    private Result measure(ScenarioRunner.Context c, Options o) throws SQLException {
        ProducerConfig producerConfig = ProducerConfig.defaults();
        List<RunResult> runs = c.runs(o.runs(), run -> {
            c.listener().phase(run, "ours");
            Side ours = E2eOurs.measure(c.sluice(), producerConfig, c.admin(), c.schema(), run, o);
            c.listener().phase(run, REFERENCE);
            Side ref = E2eReference.measure(c.dataSource(), c.admin(), c.schema(), run, ours.batchSize(),
                    producerConfig.maxInFlight(), o);
            return new RunResult(run, ours.sustained(), ref.sustained(), ours.sustained() / ref.sustained(),
                    ours.producedPerSecond(), ours.consumedPerSecond(), ours.slope(), ref.producedPerSecond(),
                    ref.consumedPerSecond(), ref.slope(), ours.batchSize(), ref.batchSize(), ours.meanRange(),
                    ours.produced(), ours.lost(), ours.duplicates(), ours.drained(), ref.lost(), ours.undrained());
        }, r -> c.listener().finished(r.toJson(o)));
        return new Result(o, c.environment(), runs);
    }

    /**
     * What one phase measured. {@code lost} is, for ours, (group, message) pairs never delivered; for the
     * reference, rows its readers stepped over.
     */
    record Side(double producedPerSecond, double consumedPerSecond, double sustained, double slope,
                        double batchSize, double meanRange, long produced, long lost, long duplicates, boolean drained,
                        String undrained) {
    }

    /** Figures of a phase from its samples: index 0 is produced, 1..G consumed per group. */
    static double[] figures(List<Sampler.Sample> window, int groups) {
        double produced = Sampler.rate(window, 0);
        double consumed = 0;
        double sustained = 0;
        double slope = Double.NEGATIVE_INFINITY;
        for (int g = 1; g <= groups; g++) {
            double c = Sampler.rate(window, g);
            consumed += c;
            sustained += Math.min(produced, c);
            slope = Math.max(slope, Sampler.slope(window, 0, g));
        }
        return new double[] {produced, consumed, sustained, slope};
    }
}
