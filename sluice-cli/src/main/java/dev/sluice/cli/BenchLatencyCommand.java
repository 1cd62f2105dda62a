package dev.sluice.cli;

import dev.sluice.bench.LatencyBenchmark;
import dev.sluice.bench.ScenarioListener;
import dev.sluice.bench.ScenarioResult;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code sluice bench latency} (docs/benchmarks.md). */
@Command(name = "latency",
        description = {"R msgs/s for D seconds with the consumer idle between messages; produce-commit -> "
        + "handler-start latency p50/p95/p99, measured twice in the same run: with LISTEN/NOTIFY wake-ups "
        + "(default) and poll-only (withWakeups(false)). ratio = p50 / poll-only p50.",
        "With --pin-xmin-for P the wake-ups mode goes on after its window: an unrelated transaction on a "
        + "connection of its own (BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT pg_current_xact_id(); then idle, "
        + "no table touched) holds the server's xmin for P while producing goes on; the messages committed under "
        + "it are measured as pinned_* and pinned_p99_ratio = pinned p99 / p99 of the window before the pin; "
        + "pinned_lost counts those not handed to a handler 5 s after the pin's rollback."})
final class BenchLatencyCommand extends BenchScenarioCommand {
    @Option(names = "--rate", paramLabel = "N", defaultValue = "200",
            description = "Messages per second (default: ${DEFAULT-VALUE}).")
    int rate;

    @Option(names = "--duration", paramLabel = "DURATION", defaultValue = "20s",
            description = "Measured window of each mode (default: ${DEFAULT-VALUE}).")
    String duration;

    @Mixin
    BenchOptions.Warmup warmup;

    @Mixin
    BenchOptions.PayloadBytes payloadBytes;

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
    Map<String, Object> settings() {
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("rate", rate + " msgs/s");
        f.put("payload", payloadBytes.value + " bytes");
        f.put("poll-only interval", pollInterval);
        f.put("duration", duration + " per mode after " + warmup.value + " warm-up, " + runs
                + (runs == 1 ? " run" : " runs"));
        if (pinXminFor != null) {
            f.put("xmin pin", pinXminFor + " after the wake-ups window");
        }
        return f;
    }

    @Override
    ScenarioResult execute(ScenarioListener listener) {
        LatencyBenchmark.Options o = LatencyBenchmark.Options.defaults().withDatabaseUrl(url()).withRate(rate)
                .withDuration(duration(duration)).withWarmup(duration(warmup.value))
                .withPayloadBytes(payloadBytes.value)
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
