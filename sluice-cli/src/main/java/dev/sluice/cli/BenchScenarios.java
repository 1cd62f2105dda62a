package dev.sluice.cli;

import dev.sluice.bench.BacklogBenchmark;
import dev.sluice.bench.E2eBenchmark;
import dev.sluice.bench.IdleBenchmark;
import dev.sluice.bench.LatencyBenchmark;
import dev.sluice.bench.QueueBenchmark;
import dev.sluice.bench.ScenarioListener;
import dev.sluice.bench.ScenarioResult;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The benchmark scenarios after {@code produce} ({@code sluice bench e2e|fanout|latency|idle|backlog|queue}):
 * each a {@link BenchCommand.ScenarioCommand} with its own options; see docs/benchmarks.md.
 */
final class BenchScenarios {
    private BenchScenarios() {
    }

    /** Options of e2e and fanout. */
    abstract static class FlowCommand extends BenchCommand.ScenarioCommand {
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
        boolean embedded() {
            return url() == null;
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

    @Command(name = "e2e",
            description = {"Produce and consume together (1 stream, 1 group, no-op handler) for D seconds; ours: "
            + "sustained msgs/s = min(produced/s, consumed/s), and the backlog slope. Reference in the same run: "
            + "raw-insert (batched INSERT ... SELECT unnest, same rows per transaction as ours) together with a "
            + "raw-range-read reader (SELECT ... WHERE id > cursor ORDER BY id LIMIT B, cursor row updated in the "
            + "same transaction).",
            "Without --database-url a temporary embedded PostgreSQL (fsync on) is started; either way the "
            + "benchmark works in a schema bench_<random> that it drops at the end."})
    static final class E2e extends FlowCommand {
        @Override
        E2eBenchmark.Options base() {
            return E2eBenchmark.Options.e2e();
        }

        @Override
        int groups() {
            return 1;
        }
    }

    @Command(name = "fanout",
            description = {"As e2e with G consumer groups on the stream, each receiving every message; ours: "
            + "deliveries/s across groups (per group min(produced/s, consumed/s), summed). Reference: raw-insert "
            + "with G raw-range-read readers, each with its own cursor row."})
    static final class Fanout extends FlowCommand {
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

    @Command(name = "latency",
            description = {"R msgs/s for D seconds with the consumer idle between messages; produce-commit -> "
            + "handler-start latency p50/p95/p99, measured twice in the same run: with LISTEN/NOTIFY wake-ups "
            + "(default) and poll-only (withWakeups(false)). ratio = p50 / poll-only p50.",
            "With --pin-xmin-for P the wake-ups mode goes on after its window: an unrelated transaction on a "
            + "connection of its own (BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT pg_current_xact_id(); then idle, "
            + "no table touched) holds the server's xmin for P while producing goes on; the messages committed under "
            + "it are measured as pinned_* and pinned_p99_ratio = pinned p99 / p99 of the window before the pin; "
            + "pinned_lost counts those not handed to a handler 5 s after the pin's rollback."})
    static final class Latency extends BenchCommand.ScenarioCommand {
        @Option(names = "--rate", paramLabel = "N", defaultValue = "200",
                description = "Messages per second (default: ${DEFAULT-VALUE}).")
        int rate;

        @Option(names = "--duration", paramLabel = "DURATION", defaultValue = "20s",
                description = "Measured window of each mode (default: ${DEFAULT-VALUE}).")
        String duration;

        @Option(names = "--warmup", paramLabel = "DURATION", defaultValue = "3s",
                description = "Warm-up before each window, not counted (default: ${DEFAULT-VALUE}).")
        String warmup;

        @Option(names = "--payload-bytes", paramLabel = "N", defaultValue = "1024",
                description = "Payload size in bytes (default: ${DEFAULT-VALUE}).")
        int payloadBytes;

        @Option(names = "--poll-interval", paramLabel = "DURATION", defaultValue = "1s",
                description = "Poll interval of the poll-only mode (default: ${DEFAULT-VALUE}).")
        String pollInterval;

        @Option(names = "--runs", paramLabel = "K", defaultValue = "1",
                description = "Measure both modes K times; report the medians (default: ${DEFAULT-VALUE}).")
        int runs;

        @Option(names = "--pin-xmin-for", paramLabel = "DURATION",
                description = "After the wake-ups window, hold the server's xmin this long with an unrelated idle "
                + "transaction that owns an xid, and measure the messages committed meanwhile; at least 1s "
                + "(default: no pin).")
        String pinXminFor;

        @Override
        boolean embedded() {
            return url() == null;
        }

        @Override
        Map<String, Object> settings() {
            Map<String, Object> f = new LinkedHashMap<>();
            f.put("rate", rate + " msgs/s");
            f.put("payload", payloadBytes + " bytes");
            f.put("poll-only interval", pollInterval);
            f.put("duration", duration + " per mode after " + warmup + " warm-up, " + runs + (runs == 1 ? " run" : " runs"));
            if (pinXminFor != null) {
                f.put("xmin pin", pinXminFor + " after the wake-ups window");
            }
            return f;
        }

        @Override
        ScenarioResult execute(ScenarioListener listener) {
            LatencyBenchmark.Options o = LatencyBenchmark.Options.defaults().withDatabaseUrl(url()).withRate(rate)
                    .withDuration(duration(duration)).withWarmup(duration(warmup)).withPayloadBytes(payloadBytes)
                    .withPollInterval(duration(pollInterval)).withRuns(runs);
            if (pinXminFor != null) {
                o = o.withPinXminFor(duration(pinXminFor));
            }
            return new LatencyBenchmark().run(o, listener);
        }

        @Override
        List<String> runFields() {
            return List.of("p50_ms", "p95_ms", "p99_ms", "poll_only_p50_ms", "poll_only_p95_ms", "poll_only_p99_ms",
                    "ratio", "lost", "poll_only_lost", "pin_xid", "pinned_p50_ms", "pinned_p99_ms", "pinned_p99_ratio",
                    "pinned_lost");
        }

        @Override
        List<String> textFields() {
            return List.of("p50_ms", "p95_ms", "p99_ms", "poll_only_p50_ms", "poll_only_p95_ms", "poll_only_p99_ms",
                    "ratio", "lost", "pinned_p50_ms", "pinned_p95_ms", "pinned_p99_ms", "pinned_p99_ratio", "pinned_lost");
        }
    }

    @Command(name = "idle",
            description = {"G idle consumer groups with live consumers and no traffic for D seconds; statements/s "
            + "(pg_stat_statements), transaction ids/s and transactions/s per idle group. Without --database-url "
            + "the temporary embedded PostgreSQL is started with pg_stat_statements loaded; on a server without "
            + "it, transactions stand in for statements (statement_source says which). Everything on the "
            + "database counts: use a server nobody else uses meanwhile."})
    static final class Idle extends BenchCommand.ScenarioCommand {
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
        boolean embedded() {
            return url() == null;
        }

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
            return List.of("statements", "transactions", "xids", "autovacuum_runs", "statement_wal_records", "window_s");
        }

        @Override
        List<String> textFields() {
            return List.of("groups", "stmts_per_s_per_group", "xids_per_s_per_group", "xacts_per_s_per_group",
                    "statement_source", "autovacuum_runs", "statement_wal_records");
        }
    }

    @Command(name = "backlog",
            description = {"Claim cost with a big backlog vs an empty stream: N messages (plain SQL bulk insert) in "
            + "stream A, only the working set of K messages in stream B; a fresh group at the beginning claims and "
            + "delivers K messages in batches, repeated; ratio = median on A / median on B. Also reports the same "
            + "with the backlog behind the cursor (history_claim_ms)."})
    static final class Backlog extends BenchCommand.ScenarioCommand {
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

        @Option(names = "--payload-bytes", paramLabel = "N", defaultValue = "1024",
                description = "Payload size in bytes (default: ${DEFAULT-VALUE}).")
        int payloadBytes;

        @Override
        boolean embedded() {
            return url() == null;
        }

        @Override
        Map<String, Object> settings() {
            Map<String, Object> f = new LinkedHashMap<>();
            f.put("backlog", size + " messages of " + payloadBytes + " bytes");
            f.put("working set", messages + " messages in batches of " + batch + ", " + repeats + " repeats per stream");
            return f;
        }

        @Override
        ScenarioResult execute(ScenarioListener listener) {
            BacklogBenchmark.Options o = new BacklogBenchmark.Options(url(), size, messages, batch, repeats, payloadBytes);
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

    @Command(name = "queue",
            description = {"Job queues: enqueue N jobs through enqueueBatch (batches of E from K callers) beside "
            + "raw-insert (the same rows by a prepared INSERT ... SELECT unnest(...) into a plain table with the job "
            + "table's columns, same batches and connections); drain them with one worker (no-op handler, "
            + "concurrency C, prefetch 2B: claims of about B) beside raw-skip-locked (C connections each claiming B rows by UPDATE ... "
            + "WHERE id IN (SELECT ... FOR UPDATE SKIP LOCKED LIMIT B) RETURNING ..., then DELETE in a second "
            + "transaction); then pickup latency (enqueue call start -> handler start) of P single enqueues at R/s "
            + "with an idle worker. ratio = drain / raw-skip-locked; enqueue_ratio = enqueue / raw-insert.",
            "Without --database-url a temporary embedded PostgreSQL (fsync on) is started; either way the "
            + "benchmark works in a schema bench_<random> that it drops at the end."})
    static final class QueueBench extends BenchCommand.ScenarioCommand {
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

        @Option(names = "--payload-bytes", paramLabel = "N", defaultValue = "1024",
                description = "Payload size in bytes (default: ${DEFAULT-VALUE}).")
        int payloadBytes;

        @Option(names = "--pickup-jobs", paramLabel = "P", defaultValue = "200",
                description = "Single enqueues of the pickup phase; 0 skips it (default: ${DEFAULT-VALUE}).")
        int pickupJobs;

        @Option(names = "--pickup-rate", paramLabel = "R", defaultValue = "20",
                description = "Pickup enqueues per second (default: ${DEFAULT-VALUE}).")
        int pickupRate;

        @Option(names = "--runs", paramLabel = "K", defaultValue = "1",
                description = "Repeat everything K times; report the medians (default: ${DEFAULT-VALUE}).")
        int runs;

        @Override
        boolean embedded() {
            return url() == null;
        }

        @Override
        Map<String, Object> settings() {
            Map<String, Object> f = new LinkedHashMap<>();
            f.put("jobs", jobs + " of " + payloadBytes + " bytes");
            f.put("enqueue", "batches of " + enqueueBatch + " from " + enqueueCallers + " callers");
            f.put("drain", "concurrency " + workers + ", batch " + batch + " (worker prefetch " + Math.min(1000, 2 * batch) + ")");
            f.put("pickup", pickupJobs == 0 ? "skipped" : pickupJobs + " jobs at " + pickupRate + "/s");
            f.put("runs", runs);
            return f;
        }

        @Override
        ScenarioResult execute(ScenarioListener listener) {
            QueueBenchmark.Options o = new QueueBenchmark.Options(url(), jobs, enqueueBatch, enqueueCallers, workers,
                    batch, payloadBytes, pickupJobs, pickupRate, runs);
            return new QueueBenchmark().run(o, listener);
        }

        @Override
        List<String> runFields() {
            return List.of("enqueue_per_s", "raw_insert_per_s", "enqueue_ratio", "drain_per_s", "raw_skip_locked_per_s",
                    "ratio", "pickup_p50_ms", "pickup_p95_ms", "drain_client_cpu_s", "raw_skip_locked_client_cpu_s",
                    "missing", "duplicates");
        }

        @Override
        List<String> textFields() {
            return List.of("enqueue_per_s", "raw_insert_per_s", "enqueue_ratio", "drain_per_s", "raw_skip_locked_per_s",
                    "ratio", "pickup_p50_ms", "pickup_p95_ms", "missing", "duplicates");
        }
    }
}
