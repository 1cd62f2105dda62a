package dev.sluice.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.ConcurrencyPolicy;
import dev.sluice.GroupConfig;
import dev.sluice.ProduceOptions;
import dev.sluice.ProducerConfig;
import dev.sluice.Sluice;
import dev.sluice.bench.E2eBenchmark.Side;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * {@code sluice bench e2e --partitions N}: the e2e run with keyed messages (K keys, default 10,000, picked at
 * random per message) through three groups measured one after another in the same invocation, each on a fresh
 * stream with the same producers (on the runner's client) and the same C consumer clients (default 2): each
 * consumer client is a {@link Sluice} of its own — own pool, runtime and fleet instance — in the benchmark's JVM,
 * which for the database is the same as C processes. The groups: a partitioned group of N buckets
 * ({@code GroupConfig.builder().partitions(N)}), an {@code ordered} group, and an unordered ({@code parallel}) one.
 * Each phase is measured by {@link E2eOurs} (sampler, window, drain, lost and duplicates); for the partitioned and
 * the ordered group a {@link KeyOrder} counts order violations and key overlaps across the consumer clients.
 *
 * <p>Targets: partitioned ≥ 2 × ordered and ≥ 0.8 × parallel (reported as pass/fail); lost, order violations
 * and key overlaps of the partitioned group must be 0 (else the command exits 1).
 */
public final class E2ePartitions {
    /** Scenario name of the summary and run lines. */
    public static final String SCENARIO = "e2e-partitioned";
    /** What {@code reference} is in this scenario's lines. */
    public static final String REFERENCE = "parallel group (same producers, keys and consumer clients)";
    /** Target: partitioned ÷ ordered at least this. */
    public static final double TARGET_VS_ORDERED = 2.0;
    /** Target: partitioned ÷ parallel at least this. */
    public static final double TARGET_VS_PARALLEL = 0.8;
    /** The drain gives up when no group received a new message for this long. */
    static final Duration DRAIN_STALL = Duration.ofSeconds(30);

    /**
     * What to run.
     *
     * @param base       the e2e options (producers, window, batch, concurrency, runs; groups must be 1)
     * @param partitions buckets of the partitioned group (1..{@value GroupConfig#MAX_PARTITIONS})
     * @param keys       distinct message keys (1..1,000,000; default 10,000)
     * @param consumers  consumer clients, each consuming the group of every phase (1..16; default 2)
     */
    public record Options(E2eBenchmark.Options base, int partitions, int keys, int consumers) {
        public Options {
            Objects.requireNonNull(base, "base");
            if (base.groups() != 1) {
                throw new IllegalArgumentException("--partitions runs one group per phase (got " + base.groups() + " groups)");
            }
            if (partitions < 1 || partitions > GroupConfig.MAX_PARTITIONS) {
                throw new IllegalArgumentException("partitions must be between 1 and " + GroupConfig.MAX_PARTITIONS
                        + " (got " + partitions + ")");
            }
            if (keys < 1 || keys > 1_000_000) {
                throw new IllegalArgumentException("keys must be between 1 and 1000000 (got " + keys + ")");
            }
            if (consumers < 1 || consumers > 16) {
                throw new IllegalArgumentException("consumer clients must be between 1 and 16 (got " + consumers + ")");
            }
        }

        /** N buckets, 10,000 keys, 2 consumer clients. */
        public static Options of(E2eBenchmark.Options base, int partitions) {
            return new Options(base, partitions, 10_000, 2);
        }
    }

    /** One phase: what E2eOurs measured, and the key checks (0 for the parallel group, which is not checked). */
    public record Phase(Side side, long orderViolations, long keyOverlaps) {
        double perSecond() {
            return side.sustained();
        }
    }

    /** One run: the three phases, in the order they ran. */
    public record RunResult(int run, Phase partitioned, Phase ordered, Phase parallel) {
        double vsOrdered() {
            return partitioned.perSecond() / ordered.perSecond();
        }

        double vsParallel() {
            return partitioned.perSecond() / parallel.perSecond();
        }

        long lost() {
            return partitioned.side().lost() + ordered.side().lost() + parallel.side().lost();
        }

        long orderViolations() {
            return partitioned.orderViolations() + ordered.orderViolations();
        }

        Map<String, Object> toJson(Options o) {
            Map<String, Object> m = BenchJson.putFigures(BenchJson.runLine(SCENARIO, run),
                    BenchJson.round(partitioned.perSecond(), 1), BenchJson.round(parallel.perSecond(), 1), REFERENCE,
                    BenchJson.round(vsParallel(), 3), E2eBenchmark.UNIT);
            m.put("duration_s", o.base().duration().toNanos() / 1e9);
            put(m, "partitioned", partitioned);
            put(m, "ordered", ordered);
            put(m, "parallel", parallel);
            m.put("ratio_vs_ordered", BenchJson.round(vsOrdered(), 3));
            m.put("ratio_vs_parallel", BenchJson.round(vsParallel(), 3));
            m.put("order_violations", orderViolations());
            m.put("key_overlaps", partitioned.keyOverlaps());
            m.put("lost", lost());
            return m;
        }

        private static void put(Map<String, Object> m, String name, Phase p) {
            m.put(name + "_per_s", BenchJson.round(p.perSecond(), 1));
            m.put(name + "_produced_per_s", BenchJson.round(p.side().producedPerSecond(), 1));
            m.put(name + "_consumed_per_s", BenchJson.round(p.side().consumedPerSecond(), 1));
            m.put(name + "_backlog_slope_per_s", BenchJson.round(p.side().slope(), 1));
            m.put(name + "_lost", p.side().lost());
            m.put(name + "_duplicates", p.side().duplicates());
            m.put(name + "_drained", p.side().drained());
            if (!name.equals("parallel")) {
                m.put(name + "_order_violations", p.orderViolations());
                m.put(name + "_key_overlaps", p.keyOverlaps());
            }
            if (p.side().undrained() != null) {
                m.put(name + "_undrained", p.side().undrained());
            }
        }
    }

    /** The outcome: every run and the medians. */
    public record Result(Options options, ProduceBenchmark.Environment environment, List<RunResult> runs)
            implements ScenarioResult {
        public Result {
            runs = List.copyOf(runs);
        }

        public double partitioned() {
            return Bench.median(runs, r -> r.partitioned().perSecond());
        }

        public double ordered() {
            return Bench.median(runs, r -> r.ordered().perSecond());
        }

        public double parallel() {
            return Bench.median(runs, r -> r.parallel().perSecond());
        }

        /** Median of the per-run ratios partitioned ÷ ordered. */
        public double ratioVsOrdered() {
            return Bench.median(runs, RunResult::vsOrdered);
        }

        /** Median of the per-run ratios partitioned ÷ parallel. */
        public double ratioVsParallel() {
            return Bench.median(runs, RunResult::vsParallel);
        }

        public long lost() {
            return runs.stream().mapToLong(RunResult::lost).sum();
        }

        public long orderViolations() {
            return runs.stream().mapToLong(RunResult::orderViolations).sum();
        }

        public long keyOverlaps() {
            return runs.stream().mapToLong(r -> r.partitioned().keyOverlaps()).sum();
        }

        @Override
        public List<Map<String, Object>> runLines() {
            return runs.stream().map(r -> r.toJson(options)).toList();
        }

        @Override
        public Map<String, Object> summary() {
            E2eBenchmark.Options b = options.base();
            Map<String, Object> m = BenchJson.summaryLine(SCENARIO, BenchJson.round(partitioned(), 1),
                    BenchJson.round(parallel(), 1), REFERENCE, BenchJson.round(ratioVsParallel(), 3), E2eBenchmark.UNIT,
                    environment);
            m.put("duration_s", b.duration().toNanos() / 1e9);
            m.put("partitioned_per_s", BenchJson.round(partitioned(), 1));
            m.put("ordered_per_s", BenchJson.round(ordered(), 1));
            m.put("parallel_per_s", BenchJson.round(parallel(), 1));
            m.put("ratio_vs_ordered", BenchJson.round(ratioVsOrdered(), 3));
            m.put("ratio_vs_parallel", BenchJson.round(ratioVsParallel(), 3));
            m.put("target_vs_ordered", ratioVsOrdered() >= TARGET_VS_ORDERED ? "pass" : "fail");
            m.put("target_vs_parallel", ratioVsParallel() >= TARGET_VS_PARALLEL ? "pass" : "fail");
            m.put("order_violations", orderViolations());
            m.put("order_violations_partitioned", runs.stream().mapToLong(r -> r.partitioned().orderViolations()).sum());
            m.put("order_violations_ordered", runs.stream().mapToLong(r -> r.ordered().orderViolations()).sum());
            m.put("key_overlaps", keyOverlaps());
            m.put("key_overlaps_ordered", runs.stream().mapToLong(r -> r.ordered().keyOverlaps()).sum());
            m.put("lost", lost());
            m.put("duplicates", runs.stream().mapToLong(r -> r.partitioned().side().duplicates() + r.ordered().side().duplicates()
                    + r.parallel().side().duplicates()).sum());
            m.put("backlog_slope_partitioned_per_s", BenchJson.round(Bench.median(runs, r -> r.partitioned().side().slope()), 1));
            m.put("backlog_slope_ordered_per_s", BenchJson.round(Bench.median(runs, r -> r.ordered().side().slope()), 1));
            m.put("backlog_slope_parallel_per_s", BenchJson.round(Bench.median(runs, r -> r.parallel().side().slope()), 1));
            m.put("produced_per_s", BenchJson.round(Bench.median(runs, r -> r.partitioned().side().producedPerSecond()), 1));
            m.put("partitions", options.partitions());
            m.put("keys", options.keys());
            m.put("consumer_clients", options.consumers());
            m.put("warmup_s", b.warmup().toNanos() / 1e9);
            m.put("callers", b.callers());
            m.put("in_flight_per_caller", b.inFlight());
            m.put("payload_bytes", b.payloadBytes());
            m.put("consume_batch", b.consumeBatch());
            m.put("consume_concurrency", b.consumeConcurrency());
            m.put("runs", runs.size());
            m.put("embedded", environment.embedded());
            return m;
        }

        @Override
        public List<String> problems() {
            List<String> p = new ArrayList<>();
            for (RunResult r : runs) {
                for (Phase ph : List.of(r.partitioned(), r.ordered(), r.parallel())) {
                    String name = ph == r.partitioned() ? "partitioned" : ph == r.ordered() ? "ordered" : "parallel";
                    if (!ph.side().drained()) {
                        p.add("run " + r.run() + ": the " + name + " group did not catch up (no progress for "
                                + DRAIN_STALL.toSeconds() + " s)");
                    }
                    if (ph.side().lost() != 0) {
                        p.add("run " + r.run() + ": " + ph.side().lost() + " committed messages were never delivered to the "
                                + name + " group");
                    }
                }
                if (r.orderViolations() != 0) {
                    p.add("run " + r.run() + ": order violations: partitioned " + r.partitioned().orderViolations()
                            + ", ordered " + r.ordered().orderViolations());
                }
                if (r.partitioned().keyOverlaps() != 0) {
                    p.add("run " + r.run() + ": " + r.partitioned().keyOverlaps() + " handler calls of the partitioned group"
                            + " started while another of their key was running");
                }
            }
            return p;
        }
    }

    /** Runs the benchmark, reporting progress to {@code listener}. */
    public Result run(Options options, ScenarioListener listener) {
        Objects.requireNonNull(options, "options");
        // The runner's client only produces: the producer's transactions in flight and a spare.
        int poolSize = ProducerConfig.defaults().maxInFlight() + 2;
        return ScenarioRunner.run(ScenarioRunner.Setup.of(options.base().databaseUrl(), "the benchmark", poolSize),
                listener, c -> measure(c, options));
    }

    private Result measure(ScenarioRunner.Context c, Options o) throws SQLException {
        ProducerConfig producerConfig = ProducerConfig.defaults();
        List<ProduceOptions> keys = new ArrayList<>(o.keys());
        for (int k = 0; k < o.keys(); k++) {
            keys.add(ProduceOptions.builder().messageKey(KeyOrder.key(k)).build());
        }
        List<RunResult> runs = c.runs(o.base().runs(), run -> {
            c.listener().phase(run, "partitioned group (" + o.partitions() + " buckets)");
            Phase partitioned = phase(c, o, run, "partitioned-", GroupConfig.builder().partitions(o.partitions()).build(),
                    keys, true, producerConfig);
            c.listener().phase(run, "ordered group");
            Phase ordered = phase(c, o, run, "ordered-", GroupConfig.builder().concurrency(ConcurrencyPolicy.ORDERED).build(),
                    keys, true, producerConfig);
            c.listener().phase(run, "parallel group");
            Phase parallel = phase(c, o, run, "parallel-", GroupConfig.defaults(), keys, false, producerConfig);
            return new RunResult(run, partitioned, ordered, parallel);
        }, r -> c.listener().finished(r.toJson(o)));
        return new Result(o, c.environment(), runs);
    }

    /** One phase on a fresh stream, consumed by fresh consumer clients that are closed after it. */
    private static Phase phase(ScenarioRunner.Context c, Options o, int run, String name, GroupConfig group,
                               List<ProduceOptions> keys, boolean checked, ProducerConfig producerConfig) throws SQLException {
        List<HikariDataSource> pools = new ArrayList<>();
        List<Sluice> clients = new ArrayList<>();
        try {
            for (int i = 1; i <= o.consumers(); i++) {
                // Per client: the claim and completion loops, the handlers' completions, LISTEN, and spares.
                HikariDataSource pool = Bench.pool(c.dataSource(), o.base().consumeConcurrency() + 4,
                        ScenarioRunner.NAME + "-consumer-" + i);
                pools.add(pool);
                clients.add(Sluice.builder().dataSource(pool).schema(c.schema()).clientId(ScenarioRunner.NAME + "-consumer-" + i)
                        .maintenance(false).build());
            }
            KeyOrder order = checked ? new KeyOrder(o.keys()) : null;
            E2eOurs.Plan plan = new E2eOurs.Plan(name, group, clients, keys, order, DRAIN_STALL);
            Side side = E2eOurs.measure(c.sluice(), producerConfig, c.admin(), c.schema(), run, o.base(), plan);
            if (order != null && order.foreignKey() != null) {
                throw new BenchmarkException("a handler saw a message the benchmark did not key: " + order.foreignKey());
            }
            return new Phase(side, order == null ? 0 : order.orderViolations(), order == null ? 0 : order.keyOverlaps());
        } finally {
            clients.forEach(Sluice::close);
            pools.forEach(HikariDataSource::close);
        }
    }
}
