package dev.sluice.cli;

import dev.sluice.bench.RebalanceBenchmark;
import dev.sluice.bench.ScenarioListener;
import dev.sluice.bench.ScenarioResult;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code sluice bench rebalance}: a partitioned group's members lose one and gain two (docs/benchmarks.md). */
@Command(name = "rebalance",
        description = {"A partitioned group (N buckets) with a keyed backlog, consumed by M member clients on a short "
        + "fleet lease; once settled one member is crashed (its pool shut: no renewal, no release) and A more start. "
        + "Reports, from the crash: reowned_s (every bucket leased by a live member, read from shard_lease), "
        + "balanced_s (and none above ceil(N / members)), drained_s (the whole backlog delivered). Target: "
        + "reowned within the lease + 5 s. Exit 1 on a lost message, an order violation, or buckets never re-owned.",
        "Without --database-url a temporary embedded PostgreSQL (fsync on) is started; either way the "
        + "benchmark works in a schema bench_<random> that it drops at the end."})
final class BenchRebalanceCommand extends BenchScenarioCommand {
    @Option(names = "--buckets", paramLabel = "N", defaultValue = "16",
            description = "Buckets of the partitioned group (default: ${DEFAULT-VALUE}).")
    int buckets;

    @Option(names = "--members", paramLabel = "M", defaultValue = "4",
            description = "Member clients before the crash (default: ${DEFAULT-VALUE}).")
    int members;

    @Option(names = "--add", paramLabel = "A", defaultValue = "2",
            description = "Member clients started right after the crash (default: ${DEFAULT-VALUE}).")
    int added;

    @Option(names = "--backlog", paramLabel = "N", defaultValue = "100000",
            description = "Messages produced before the members start (default: ${DEFAULT-VALUE}).")
    int backlog;

    @Option(names = "--keys", paramLabel = "N", defaultValue = "10000",
            description = "Distinct message keys (default: ${DEFAULT-VALUE}).")
    int keys;

    @Option(names = "--lease", paramLabel = "DURATION", defaultValue = "3s",
            description = "The members' fleet lease (shard leases follow it) and claim lease (default: ${DEFAULT-VALUE}).")
    String lease;

    @Option(names = "--concurrency", paramLabel = "N", defaultValue = "8",
            description = "Handlers per member (default: ${DEFAULT-VALUE}).")
    int concurrency;

    @Mixin
    BenchOptions.PayloadBytes payloadBytes;

    private RebalanceBenchmark.Options options() {
        return new RebalanceBenchmark.Options(url(), buckets, members, added, backlog, keys, duration(lease), concurrency,
                payloadBytes.value);
    }

    @Override
    Map<String, Object> settings() {
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("group", "partitioned, " + buckets + " buckets; backlog " + backlog + " messages, " + keys + " keys, "
                + payloadBytes.value + " bytes");
        f.put("members", members + " clients, crash 1, start " + added + "; concurrency " + concurrency + " each");
        f.put("lease", lease);
        return f;
    }

    @Override
    ScenarioResult execute(ScenarioListener listener) {
        return new RebalanceBenchmark().run(options(), listener);
    }

    @Override
    List<String> runFields() {
        return List.of();
    }

    @Override
    List<String> textFields() {
        return List.of("reowned_s", "target_reowned", "balanced_s", "drained_s", "lease_s", "bound_s", "buckets",
                "members_before", "members_after", "backlog_left_at_kill", "victim", "victim_buckets",
                "victim_held_after_kill", "owners_before", "owners_after", "lost", "duplicates", "order_violations",
                "key_overlaps");
    }
}
