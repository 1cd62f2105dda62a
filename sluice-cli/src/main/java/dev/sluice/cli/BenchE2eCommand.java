package dev.sluice.cli;

import dev.sluice.bench.E2eBenchmark;
import picocli.CommandLine.Command;

/** {@code sluice bench e2e}: one group (docs/benchmarks.md). */
@Command(name = "e2e",
        description = {"Produce and consume together (1 stream, 1 group, no-op handler) for D seconds; ours: "
        + "sustained msgs/s = min(produced/s, consumed/s), and the backlog slope. Reference in the same run: "
        + "raw-insert (batched INSERT ... SELECT unnest, same rows per transaction as ours) together with a "
        + "raw-range-read reader (SELECT ... WHERE id > cursor ORDER BY id LIMIT B, cursor row updated in the "
        + "same transaction).",
        "Without --database-url a temporary embedded PostgreSQL (fsync on) is started; either way the "
        + "benchmark works in a schema bench_<random> that it drops at the end."})
final class BenchE2eCommand extends BenchFlowCommand {
    @Override
    E2eBenchmark.Options base() {
        return E2eBenchmark.Options.e2e();
    }

    @Override
    int groups() {
        return 1;
    }
}
