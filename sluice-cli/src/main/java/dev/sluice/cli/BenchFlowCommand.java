package dev.sluice.cli;

import dev.sluice.bench.E2eBenchmark;
import dev.sluice.bench.ScenarioListener;
import dev.sluice.bench.ScenarioResult;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Option;

/** The options and output of {@code sluice bench e2e} and {@code fanout} (docs/benchmarks.md). */
abstract class BenchFlowCommand extends BenchScenarioCommand {
    @Option(names = "--callers", paramLabel = "N", defaultValue = "8",
            description = "Producer threads sharing one producer (default: ${DEFAULT-VALUE}).")
    int callers;

    @Option(names = "--in-flight", paramLabel = "N", defaultValue = "4",
            description = "produceAsync calls each producer thread keeps pending (default: ${DEFAULT-VALUE}).")
    int inFlight;

    @Option(names = "--duration", paramLabel = "DURATION", defaultValue = "20s",
            description = "Measured window of each phase (default: ${DEFAULT-VALUE}).")
    String duration;

    @Option(names = "--warmup", paramLabel = "DURATION", defaultValue = "3s",
            description = "Warm-up before each window, not counted (default: ${DEFAULT-VALUE}).")
    String warmup;

    @Option(names = "--payload-bytes", paramLabel = "N", defaultValue = "1024",
            description = "Payload size in bytes (default: ${DEFAULT-VALUE}).")
    int payloadBytes;

    @Option(names = "--batch", paramLabel = "N", defaultValue = "256",
            description = "Consumer batch size, and the reference readers' LIMIT (default: ${DEFAULT-VALUE}).")
    int batch;

    @Option(names = "--concurrency", paramLabel = "N", defaultValue = "8",
            description = "Handler concurrency of each group (default: ${DEFAULT-VALUE}).")
    int concurrency;

    @Option(names = "--runs", paramLabel = "K", defaultValue = "1",
            description = "Repeat ours and the reference K times; report the medians (default: ${DEFAULT-VALUE}).")
    int runs;

    abstract E2eBenchmark.Options base();

    abstract int groups();

    private E2eBenchmark.Options options() {
        return base().withDatabaseUrl(url()).withGroups(groups()).withCallers(callers).withInFlight(inFlight)
                .withDuration(duration(duration)).withWarmup(duration(warmup)).withPayloadBytes(payloadBytes)
                .withConsumeBatch(batch).withConsumeConcurrency(concurrency).withRuns(runs);
    }

    @Override
    Map<String, Object> settings() {
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("groups", groups());
        f.put("payload", payloadBytes + " bytes");
        f.put("producers", callers + " threads x " + inFlight + " produceAsync in flight");
        f.put("consumers", "batch " + batch + ", concurrency " + concurrency + " per group");
        f.put("duration", duration + " per phase after " + warmup + " warm-up, " + runs + (runs == 1 ? " run" : " runs"));
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
