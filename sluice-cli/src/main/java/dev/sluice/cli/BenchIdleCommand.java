package dev.sluice.cli;

import dev.sluice.bench.IdleBenchmark;
import dev.sluice.bench.ScenarioListener;
import dev.sluice.bench.ScenarioResult;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code sluice bench idle} (docs/benchmarks.md). */
@Command(name = "idle",
        description = {"G idle consumer groups with live consumers and no traffic for D seconds; statements/s "
        + "(pg_stat_statements), transaction ids/s and transactions/s per idle group. Without --database-url "
        + "the temporary embedded PostgreSQL is started with pg_stat_statements loaded; on a server without "
        + "it, transactions stand in for statements (statement_source says which). Everything on the "
        + "database counts: use a server nobody else uses meanwhile."})
final class BenchIdleCommand extends BenchScenarioCommand {
    @Option(names = "--groups", paramLabel = "G", defaultValue = "20",
            description = "Idle groups, each with a live consumer (default: ${DEFAULT-VALUE}).")
    int groups;

    @Option(names = "--duration", paramLabel = "DURATION", defaultValue = "60s",
            description = "Measured window (default: ${DEFAULT-VALUE}).")
    String duration;

    @Option(names = "--warmup", paramLabel = "DURATION", defaultValue = "12s",
            description = "Wait after the consumers started before the window opens (default: ${DEFAULT-VALUE}).")
    String warmup;

    @Override
    Map<String, Object> settings() {
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("groups", groups);
        f.put("duration", duration + " after " + warmup + " warm-up");
        return f;
    }

    @Override
    ScenarioResult execute(ScenarioListener listener) {
        IdleBenchmark.Options o = IdleBenchmark.Options.defaults().withDatabaseUrl(url()).withGroups(groups)
                .withDuration(duration(duration)).withWarmup(duration(warmup));
        return new IdleBenchmark().run(o, listener);
    }

    @Override
    List<String> runFields() {
        return List.of("statements", "transactions", "xids", "autovacuum_runs", "statement_wal_records", "window_s",
                "threads", "threads_baseline", "heap_bytes_per_group");
    }

    @Override
    List<String> textFields() {
        return List.of("groups", "stmts_per_s_per_group", "xids_per_s_per_group", "xacts_per_s_per_group",
                "statement_source", "autovacuum_runs", "statement_wal_records", "threads", "threads_baseline",
                "heap_bytes_per_group");
    }
}
