package dev.sluice.cli;

import dev.sluice.bench.E2eBenchmark;
import dev.sluice.bench.ScenarioListener;
import dev.sluice.bench.ScenarioResult;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** The options and output of {@code sluice bench e2e} and {@code fanout} (docs/benchmarks.md). */
abstract class BenchFlowCommand extends BenchScenarioCommand {
    @Option(names = "--callers", paramLabel = "N", defaultValue = "8",
            description = "Producer threads sharing one producer (default: ${DEFAULT-VALUE}).")
    int callers;

    @Option(names = "--in-flight", paramLabel = "N", defaultValue = "4",
            description = "produceAsync calls each producer thread keeps pending (default: ${DEFAULT-VALUE}).")
    int inFlight;

    @Mixin
    BenchOptions.PhaseDuration duration;

    @Mixin
    BenchOptions.Warmup warmup;

    @Mixin
    BenchOptions.PayloadBytes payloadBytes;

    @Option(names = "--batch", paramLabel = "N", defaultValue = "256",
            description = "Consumer batch size, and the reference readers' LIMIT (default: ${DEFAULT-VALUE}).")
    int batch;

    @Option(names = "--concurrency", paramLabel = "N", defaultValue = "8",
            description = "Handler concurrency of each group (default: ${DEFAULT-VALUE}).")
    int concurrency;

    @Mixin
    BenchOptions.ReferenceRuns runs;

    abstract E2eBenchmark.Options base();

    abstract int groups();

    E2eBenchmark.Options options() {
        return base().withDatabaseUrl(url()).withGroups(groups()).withCallers(callers).withInFlight(inFlight)
                .withDuration(duration(duration.value)).withWarmup(duration(warmup.value))
                .withPayloadBytes(payloadBytes.value).withConsumeBatch(batch).withConsumeConcurrency(concurrency)
                .withRuns(runs.value);
    }

    @Override
    Map<String, Object> settings() {
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("groups", groups());
        f.put("payload", payloadBytes.value + " bytes");
        f.put("producers", callers + " threads x " + inFlight + " produceAsync in flight");
        f.put("consumers", "batch " + batch + ", concurrency " + concurrency + " per group");
        f.put("duration", duration.value + " per phase after " + warmup.value + " warm-up, " + runs.value
                + (runs.value == 1 ? " run" : " runs"));
        return f;
    }

    @Override
    ScenarioResult execute(ScenarioListener listener) {
        return new E2eBenchmark().run(options(), listener);
    }

    @Override
    List<String> runFields() {
        return List.of("ours", "reference", "ratio", "produced_per_s", "consumed_per_s", "backlog_slope_per_s",
                "reference_insert_per_s", "reference_read_per_s", "batch_size", "lost", "reference_skipped");
    }

    @Override
    List<String> textFields() {
        return List.of("ours", "reference", "ratio", "produced_per_s", "consumed_per_s", "backlog_slope_per_s",
                "reference_insert_per_s", "reference_read_per_s", "reference_backlog_slope_per_s", "batch_size",
                "lost");
    }
}
