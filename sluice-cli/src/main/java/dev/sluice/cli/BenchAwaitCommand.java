package dev.sluice.cli;

import dev.sluice.bench.AwaitBenchmark;
import dev.sluice.bench.ScenarioListener;
import dev.sluice.bench.ScenarioResult;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code sluice bench await}: N concurrent awaiters on N jobs, ack → wake-up latency (docs/benchmarks.md). */
@Command(name = "await",
        description = {"Completion waits: N jobs enqueued (no keepRuns), N awaiter threads each in Queue.await on one "
        + "job; once the database shows all N marked awaited, one worker (concurrency C) acks them, its handler noting "
        + "the time right after ack() returned. Latency per job = await returned - ack returned (same JVM clock; "
        + "negative ones, an awaiter faster than its handler thread, count as 0 and in 'negative'). Reports "
        + "p50_ms, p99_ms, max_ms; target p50 <= 5 ms (pass/fail; a miss does not change the exit code). Exit 1 "
        + "when an awaiter fails or a job has no ack or no wake-up.",
        "Without --database-url a temporary embedded PostgreSQL (fsync on) is started; either way the "
        + "benchmark works in a schema bench_<random> that it drops at the end."})
final class BenchAwaitCommand extends BenchScenarioCommand {
    @Option(names = "--jobs", paramLabel = "N", defaultValue = "1000",
            description = "Jobs, and awaiter threads (one per job) (default: ${DEFAULT-VALUE}).")
    int jobs;

    @Option(names = "--workers", paramLabel = "C", defaultValue = "8",
            description = "Handler concurrency of the acking worker (default: ${DEFAULT-VALUE}).")
    int workers;

    @Mixin
    BenchOptions.PayloadBytes payloadBytes;

    @Option(names = "--runs", paramLabel = "K", defaultValue = "1",
            description = "Repeat K times; report the medians (default: ${DEFAULT-VALUE}).")
    int runs;

    private AwaitBenchmark.Options options() {
        return new AwaitBenchmark.Options(url(), jobs, workers, payloadBytes.value, runs);
    }

    @Override
    Map<String, Object> settings() {
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("jobs", jobs + " of " + payloadBytes.value + " bytes, no keepRuns");
        f.put("awaiters", jobs + " platform threads, one job each");
        f.put("worker", "concurrency " + workers + ", the handler acks");
        f.put("runs", runs + " after a warm-up round");
        return f;
    }

    @Override
    ScenarioResult execute(ScenarioListener listener) {
        return new AwaitBenchmark().run(options(), listener);
    }

    @Override
    List<String> runFields() {
        return List.of("p50_ms", "p99_ms", "max_ms", "count", "negative", "from_ack_call_p50_ms", "ack_call_p50_ms",
                "register_s", "acks_per_s", "failed");
    }

    @Override
    List<String> textFields() {
        return List.of("p50_ms", "target_p50", "p99_ms", "max_ms", "count", "negative", "from_ack_call_p50_ms",
                "from_ack_call_p99_ms", "ack_call_p50_ms", "register_s", "acks_per_s", "pool_size", "failed");
    }
}
