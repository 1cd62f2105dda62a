package dev.sluice.cli;

import dev.sluice.bench.HttpBenchmark;
import dev.sluice.bench.ScenarioListener;
import dev.sluice.bench.ScenarioResult;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code sluice bench http}: the HTTP API's produce and pull-consume beside the library's, in one run (docs/benchmarks.md). */
@Command(name = "http",
        description = {"The HTTP API beside the library, same run, same database: N messages produced in batches of B by C "
                + "clients over HTTP (keep-alive) and through produceBatch; each backlog drained (HTTP: C clients pulling "
                + "claims of up to B and posting outcomes; library: a consumption of concurrency C); then L single-message "
                + "produces each way. Reports produce_ratio and consume_ratio (HTTP / library; target >= 0.5 each, pass/fail), "
                + "added_p50_ms, added_p99_ms and lost (exit 1 when a message produced over HTTP was never delivered).",
                "Without --database-url a temporary embedded PostgreSQL is started; either way the benchmark works in a "
                + "schema bench_<random> that it drops at the end."})
final class BenchHttpCommand extends BenchScenarioCommand {
    @Option(names = "--messages", paramLabel = "N", defaultValue = "50000", description = "Messages per side and run (default: ${DEFAULT-VALUE}).")
    int messages;

    @Option(names = "--clients", paramLabel = "C", defaultValue = "8", description = "HTTP clients and library threads (default: ${DEFAULT-VALUE}).")
    int clients;

    @Option(names = "--batch", paramLabel = "B", defaultValue = "100", description = "Messages per batch and claim (default: ${DEFAULT-VALUE}).")
    int batch;

    @Option(names = "--payload-bytes", paramLabel = "BYTES", defaultValue = "256", description = "Payload size (default: ${DEFAULT-VALUE}).")
    int payloadBytes;

    @Option(names = "--latencies", paramLabel = "L", defaultValue = "500", description = "Single produces timed per side (default: ${DEFAULT-VALUE}).")
    int latencies;

    @Option(names = "--runs", paramLabel = "K", defaultValue = "1", description = "Repeat K times; report the medians (default: ${DEFAULT-VALUE}).")
    int runs;

    @Override
    Map<String, Object> settings() {
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("messages", messages + " per side of " + payloadBytes + " bytes, batches of " + batch);
        f.put("clients", clients + " HTTP clients (keep-alive) / " + clients + " library threads");
        f.put("latency", latencies + " single produces each way");
        f.put("runs", runs);
        return f;
    }

    @Override
    ScenarioResult execute(ScenarioListener listener) {
        return new HttpBenchmark().run(new HttpBenchmark.Options(url(), messages, clients, batch, payloadBytes, latencies, runs),
                listener);
    }

    @Override
    List<String> runFields() {
        return List.of("http_produce_per_s", "library_produce_per_s", "produce_ratio", "http_consume_per_s",
                "library_consume_per_s", "consume_ratio", "added_p50_ms", "added_p99_ms", "lost");
    }

    @Override
    List<String> textFields() {
        return List.of("produce_ratio", "consume_ratio", "target", "http_produce_per_s", "library_produce_per_s",
                "http_consume_per_s", "library_consume_per_s", "added_p50_ms", "added_p99_ms", "lost");
    }
}
