package dev.sluice.cli;

import dev.sluice.bench.QueueBenchmark;
import dev.sluice.bench.ScenarioListener;
import dev.sluice.bench.ScenarioResult;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code sluice bench queue} (docs/benchmarks.md). */
@Command(name = "queue",
        description = {"Job queues: enqueue N jobs through enqueueBatch (batches of E from K callers) beside "
        + "raw-insert (the same rows by a prepared INSERT ... SELECT unnest(...) into a plain table with the job "
        + "table's columns, same batches and connections); drain them with one worker (no-op handler, "
        + "concurrency C, prefetch 2B: claims of about B) beside raw-skip-locked (C connections each claiming B rows by UPDATE ... "
        + "WHERE id IN (SELECT ... FOR UPDATE SKIP LOCKED LIMIT B) RETURNING ..., then DELETE in a second "
        + "transaction); then pickup latency (enqueue call start -> handler start) of P single enqueues at R/s "
        + "with an idle worker. ratio = drain / raw-skip-locked; enqueue_ratio = enqueue / raw-insert.",
        "With --keep-runs D each run also enqueues and drains N jobs on a queue whose handle stamps keepRuns(D) (run "
        + "records and events written with every claim and ack), same worker settings; keep_runs_ratio = that drain / "
        + "the plain drain, target >= 0.75 (pass/fail; a miss does not change the exit code).",
        "Without --database-url a temporary embedded PostgreSQL (fsync on) is started; either way the "
        + "benchmark works in a schema bench_<random> that it drops at the end."})
final class BenchQueueCommand extends BenchScenarioCommand {
    @Option(names = "--jobs", paramLabel = "N", defaultValue = "100000",
            description = "Jobs enqueued and drained per run (default: ${DEFAULT-VALUE}).")
    int jobs;

    @Option(names = "--enqueue-batch", paramLabel = "E", defaultValue = "1000",
            description = "Jobs per enqueueBatch call and per reference insert (default: ${DEFAULT-VALUE}).")
    int enqueueBatch;

    @Option(names = "--enqueue-callers", paramLabel = "K", defaultValue = "4",
            description = "Enqueueing threads, and reference insert connections (default: ${DEFAULT-VALUE}).")
    int enqueueCallers;

    @Option(names = "--workers", paramLabel = "C", defaultValue = "8",
            description = "Handler concurrency of the worker, and reference claim connections (default: ${DEFAULT-VALUE}).")
    int workers;

    @Option(names = "--batch", paramLabel = "B", defaultValue = "256",
            description = "Rows per reference claim; the worker runs with prefetch 2B, so its claims take about "
            + "B jobs (default: ${DEFAULT-VALUE}).")
    int batch;

    @Mixin
    BenchOptions.PayloadBytes payloadBytes;

    @Option(names = "--pickup-jobs", paramLabel = "P", defaultValue = "200",
            description = "Single enqueues of the pickup phase; 0 skips it (default: ${DEFAULT-VALUE}).")
    int pickupJobs;

    @Option(names = "--pickup-rate", paramLabel = "R", defaultValue = "20",
            description = "Pickup enqueues per second (default: ${DEFAULT-VALUE}).")
    int pickupRate;

    @Option(names = "--runs", paramLabel = "K", defaultValue = "1",
            description = "Repeat everything K times; report the medians (default: ${DEFAULT-VALUE}).")
    int runs;

    @Option(names = "--keep-runs", paramLabel = "DURATION",
            description = "Also drain N jobs on a queue that keeps runs this long (1s to 3650d), beside the plain "
            + "drain; reports keep_runs_ratio (default: off).")
    String keepRuns;

    @Override
    Map<String, Object> settings() {
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("jobs", jobs + " of " + payloadBytes.value + " bytes");
        f.put("enqueue", "batches of " + enqueueBatch + " from " + enqueueCallers + " callers");
        f.put("drain", "concurrency " + workers + ", batch " + batch + " (worker prefetch " + Math.min(1000, 2 * batch) + ")");
        if (keepRuns != null) {
            f.put("keep runs", keepRuns + ": a second drain of " + jobs + " jobs on a queue with keepRuns, same worker");
        }
        f.put("pickup", pickupJobs == 0 ? "skipped" : pickupJobs + " jobs at " + pickupRate + "/s");
        f.put("runs", runs);
        return f;
    }

    @Override
    ScenarioResult execute(ScenarioListener listener) {
        QueueBenchmark.Options o = new QueueBenchmark.Options(url(), jobs, enqueueBatch, enqueueCallers, workers,
                batch, payloadBytes.value, pickupJobs, pickupRate, runs, keepRuns == null ? null : duration(keepRuns));
        return new QueueBenchmark().run(o, listener);
    }

    @Override
    List<String> runFields() {
        return List.of("enqueue_per_s", "raw_insert_per_s", "enqueue_ratio", "drain_per_s", "raw_skip_locked_per_s",
                "ratio", "keep_runs_drain_per_s", "keep_runs_ratio", "pickup_p50_ms", "pickup_p95_ms", "drain_client_cpu_s",
                "raw_skip_locked_client_cpu_s", "keep_runs_client_cpu_s", "missing", "duplicates");
    }

    @Override
    List<String> textFields() {
        return List.of("enqueue_per_s", "raw_insert_per_s", "enqueue_ratio", "drain_per_s", "raw_skip_locked_per_s",
                "ratio", "keep_runs_drain_per_s", "keep_runs_ratio", "target_keep_runs", "keep_runs_records", "pickup_p50_ms",
                "pickup_p95_ms", "missing", "duplicates");
    }
}
