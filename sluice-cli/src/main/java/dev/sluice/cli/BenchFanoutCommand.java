package dev.sluice.cli;

import dev.sluice.bench.E2eBenchmark;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code sluice bench fanout}: G groups (docs/benchmarks.md). */
@Command(name = "fanout",
        description = {"As e2e with G consumer groups on the stream, each receiving every message; ours: "
        + "deliveries/s across groups (per group min(produced/s, consumed/s), summed). Reference: raw-insert "
        + "with G raw-range-read readers, each with its own cursor row."})
final class BenchFanoutCommand extends BenchFlowCommand {
    @Option(names = "--groups", paramLabel = "G", defaultValue = "4",
            description = "Consumer groups (default: ${DEFAULT-VALUE}).")
    int groups;

    @Override
    E2eBenchmark.Options base() {
        return E2eBenchmark.Options.fanout();
    }

    @Override
    int groups() {
        return groups;
    }
}
