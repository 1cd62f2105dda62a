package dev.sluice.cli;

import dev.sluice.bench.BacklogBenchmark;
import dev.sluice.bench.ScenarioListener;
import dev.sluice.bench.ScenarioResult;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code sluice bench backlog} (docs/benchmarks.md). */
@Command(name = "backlog",
        description = {"Claim cost with a big backlog vs an empty stream: N messages (plain SQL bulk insert) in "
        + "stream A, only the working set of K messages in stream B; a fresh group at the beginning claims and "
        + "delivers K messages in batches, repeated; ratio = median on A / median on B. Also reports the same "
        + "with the backlog behind the cursor (history_claim_ms)."})
final class BenchBacklogCommand extends BenchScenarioCommand {
    @Option(names = "--size", paramLabel = "N", defaultValue = "1000000",
            description = "Messages in the backlog (default: ${DEFAULT-VALUE}; the issue asks for 10000000).")
    long size;

    @Option(names = "--messages", paramLabel = "K", defaultValue = "200",
            description = "Working set claimed and delivered per measurement (default: ${DEFAULT-VALUE}).")
    int messages;

    @Option(names = "--batch", paramLabel = "N", defaultValue = "100",
            description = "Consumer batch size (default: ${DEFAULT-VALUE}).")
    int batch;

    @Option(names = "--repeats", paramLabel = "R", defaultValue = "10",
            description = "Measurements per stream; medians are reported (default: ${DEFAULT-VALUE}).")
    int repeats;

    @Mixin
    BenchOptions.PayloadBytes payloadBytes;

    @Override
    Map<String, Object> settings() {
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("backlog", size + " messages of " + payloadBytes.value + " bytes");
        f.put("working set", messages + " messages in batches of " + batch + ", " + repeats + " repeats per stream");
        return f;
    }

    @Override
    ScenarioResult execute(ScenarioListener listener) {
        BacklogBenchmark.Options o = new BacklogBenchmark.Options(url(), size, messages, batch, repeats,
                payloadBytes.value);
        return new BacklogBenchmark().run(o, listener);
    }

    @Override
    List<String> runFields() {
        return List.of("fill_s");
    }

    @Override
    List<String> textFields() {
        return List.of("backlog_size", "empty_claim_ms", "backlog_claim_ms", "history_claim_ms", "ratio",
                "history_ratio", "fill_s");
    }
}
