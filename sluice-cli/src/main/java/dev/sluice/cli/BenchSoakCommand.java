package dev.sluice.cli;

import dev.sluice.bench.ScenarioListener;
import dev.sluice.bench.ScenarioResult;
import dev.sluice.bench.SoakBenchmark;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code sluice bench soak} (docs/benchmarks.md). */
@Command(name = "soak",
        description = {"Storage stays bounded: R msgs/s, each with its own idempotency key, for D into a stream with "
        + "a short retention (also its idempotency-key TTL and delivery-log retention; partitions of about "
        + "R x retention / 4 ids) while one consumer group consumes and the client's elected manager runs the "
        + "janitor every 5 s. Every minute a row: produced/s, delivered/s, produce -> handler p50/p99, bytes of the "
        + "stream's tables and of the control plane (pg_total_relation_size), dead tuples, log partitions. "
        + "lost = committed but never delivered (a message retention dropped first counts); "
        + "growth = bytes_end / bytes_steady (median of the rows from one retention + one minute on).",
        "With --pin-xmin-at T --pin-xmin-for P a connection of its own opens a REPEATABLE READ transaction at T, "
        + "reads one row to take its snapshot and stays idle in it for P (the vacuum horizon is held); "
        + "p99_ms_before_pin / _during_pin / _after_pin (the window from 60 s after the pin's end) and "
        + "rate_ratio_during_pin (delivered/s during / the 60 s before) compare the consumer around it."})
final class BenchSoakCommand extends BenchScenarioCommand {
    @Option(names = "--duration", paramLabel = "DURATION", defaultValue = "10m",
            description = "How long producing goes on, 5s to 24h (default: ${DEFAULT-VALUE}).")
    String duration;

    @Option(names = "--rate", paramLabel = "N", defaultValue = "2000",
            description = "Messages per second (default: ${DEFAULT-VALUE}).")
    int rate;

    @Option(names = "--retention", paramLabel = "DURATION", defaultValue = "1m",
            description = "The stream's retention, idempotency-key TTL and delivery-log retention (default: ${DEFAULT-VALUE}).")
    String retention;

    @Option(names = "--sample-every", paramLabel = "DURATION", defaultValue = "1m",
            description = "How often a row is recorded and printed (default: ${DEFAULT-VALUE}).")
    String sampleEvery;

    @Option(names = "--pin-xmin-at", paramLabel = "DURATION",
            description = "When the snapshot pin starts, after the start of producing (with --pin-xmin-for; default: no pin).")
    String pinXminAt;

    @Option(names = "--pin-xmin-for", paramLabel = "DURATION",
            description = "How long the pin holds the vacuum horizon (with --pin-xmin-at); it must end by the end of producing.")
    String pinXminFor;

    @Mixin
    BenchOptions.PayloadBytes payloadBytes;

    @Override
    Map<String, Object> settings() {
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("rate", rate + " msgs/s, a unique idempotency key each");
        f.put("payload", payloadBytes.value + " bytes");
        f.put("duration", duration + ", a row every " + sampleEvery);
        f.put("retention", retention + " (also the idempotency-key TTL and the delivery-log retention)");
        f.put("maintenance", "every " + SoakBenchmark.MAINTENANCE_INTERVAL.toSeconds() + " s (the elected manager)");
        if (pinXminAt != null || pinXminFor != null) {
            f.put("snapshot pin", "at " + pinXminAt + " for " + pinXminFor);
        }
        return f;
    }

    @Override
    ScenarioResult execute(ScenarioListener listener) {
        if ((pinXminAt == null) != (pinXminFor == null)) {
            throw new Main.UsageException("--pin-xmin-at and --pin-xmin-for go together");
        }
        SoakBenchmark.Options o = SoakBenchmark.Options.defaults().withDatabaseUrl(url()).withRate(rate)
                .withDuration(duration(duration)).withRetention(duration(retention))
                .withSampleEvery(duration(sampleEvery)).withPayloadBytes(payloadBytes.value);
        if (pinXminAt != null) {
            o = o.withPin(duration(pinXminAt), duration(pinXminFor));
        }
        return new SoakBenchmark().run(o, listener);
    }

    @Override
    List<String> runFields() {
        return List.of("minute", "t_s", "produced_per_s", "delivered_per_s", "p50_ms", "p99_ms", "backlog",
                "bytes_stream", "bytes_control_plane", "bytes_total", "partitions", "oldest_id", "dead_tuples", "pinned");
    }

    @Override
    List<String> textFields() {
        return List.of("produced", "delivered", "lost", "redelivered", "produce_failures", "delivered_per_s", "p50_ms",
                "p99_ms", "bytes_steady", "bytes_end", "growth", "pin_held", "p99_ms_before_pin", "p99_ms_during_pin",
                "p99_ms_after_pin", "rate_ratio_during_pin");
    }
}
