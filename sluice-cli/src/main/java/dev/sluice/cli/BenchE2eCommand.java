package dev.sluice.cli;

import dev.sluice.GroupConfig;
import dev.sluice.bench.E2eBenchmark;
import dev.sluice.bench.E2ePartitions;
import dev.sluice.bench.ScenarioListener;
import dev.sluice.bench.ScenarioResult;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/** {@code sluice bench e2e}: one group (docs/benchmarks.md); with {@code --partitions N}, partitioned vs ordered vs parallel. */
@Command(name = "e2e",
        description = {"Produce and consume together (1 stream, 1 group, no-op handler) for D seconds; ours: "
        + "sustained msgs/s = min(produced/s, consumed/s), and the backlog slope. Reference in the same run: "
        + "raw-insert (batched INSERT ... SELECT unnest, same rows per transaction as ours) together with a "
        + "raw-range-read reader (SELECT ... WHERE id > cursor ORDER BY id LIMIT B, cursor row updated in the "
        + "same transaction).",
        "With --partitions N: keyed messages (10,000 keys) through a partitioned group of N buckets, then an "
        + "ordered and a parallel group, one after another, each consumed by 2 consumer clients; targets "
        + "partitioned >= 2x ordered and >= 0.8x parallel; exit 1 on a lost message, an order violation or a "
        + "key running twice at once.",
        "Without --database-url a temporary embedded PostgreSQL (fsync on) is started; either way the "
        + "benchmark works in a schema bench_<random> that it drops at the end."})
final class BenchE2eCommand extends BenchFlowCommand {
    Integer partitions;

    /** Checked as it is parsed, so a bad value is a usage error before anything starts. */
    @Option(names = "--partitions", paramLabel = "N",
            description = "Compare a partitioned group of N buckets (1.." + GroupConfig.MAX_PARTITIONS + ") with an ordered"
                    + " and a parallel group, same producers, keys and 2 consumer clients (default: off, plain e2e).")
    void partitions(int n) {
        if (n < 1 || n > GroupConfig.MAX_PARTITIONS) {
            throw new ParameterException(spec.commandLine(), "--partitions must be between 1 and "
                    + GroupConfig.MAX_PARTITIONS + " (got " + n + ")");
        }
        partitions = n;
    }

    @Override
    E2eBenchmark.Options base() {
        return E2eBenchmark.Options.e2e();
    }

    @Override
    int groups() {
        return 1;
    }

    private boolean partitioned() {
        return partitions != null;
    }

    @Override
    Map<String, Object> settings() {
        Map<String, Object> f = super.settings();
        if (partitioned()) {
            f.put("groups", "partitioned (" + partitions + " buckets), then ordered, then parallel; 10000 keys");
            f.put("consumers", "2 consumer clients, batch " + batch + ", concurrency " + concurrency + " each");
        }
        return f;
    }

    @Override
    ScenarioResult execute(ScenarioListener listener) {
        if (partitioned()) {
            return new E2ePartitions().run(E2ePartitions.Options.of(options(), partitions), listener);
        }
        return super.execute(listener);
    }

    @Override
    List<String> runFields() {
        if (partitions == null) {
            return super.runFields();
        }
        return List.of("partitioned_per_s", "ordered_per_s", "parallel_per_s", "ratio_vs_ordered", "ratio_vs_parallel",
                "produced_per_s", "order_violations", "key_overlaps", "lost");
    }

    @Override
    List<String> textFields() {
        if (partitions == null) {
            return super.textFields();
        }
        return List.of("partitioned_per_s", "ordered_per_s", "parallel_per_s", "ratio_vs_ordered", "target_vs_ordered",
                "ratio_vs_parallel", "target_vs_parallel", "produced_per_s", "backlog_slope_partitioned_per_s",
                "backlog_slope_ordered_per_s", "backlog_slope_parallel_per_s", "order_violations", "key_overlaps",
                "duplicates", "lost");
    }
}
