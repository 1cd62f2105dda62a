package dev.sluice.cli;

import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import dev.sluice.bench.BenchJson;
import dev.sluice.bench.BenchmarkException;
import dev.sluice.bench.ProduceBenchmark;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code sluice bench produce} (docs/benchmarks.md): its own header, run lines and summary. */
@Command(name = "produce",
        description = {"N callers produce payloads through one shared producer for D seconds; "
        + "reference: the same rows by plain batched INSERT ... SELECT unnest(...) with the same mean rows "
        + "per transaction as ours, over maxInFlight (2) connections.",
        "Without --database-url a temporary embedded PostgreSQL (fsync on) is started (--data-dir is not "
        + "used); either way the benchmark works in a schema bench_<random> that it drops at the end "
        + "(--schema is not used)."})
final class BenchProduceCommand extends BenchBase {
    @Option(names = "--callers", paramLabel = "N", defaultValue = "8",
            description = "Threads calling produce concurrently (default: ${DEFAULT-VALUE}).")
    int callers;

    @Mixin
    BenchOptions.PhaseDuration duration;

    @Mixin
    BenchOptions.Warmup warmup;

    @Mixin
    BenchOptions.PayloadBytes payloadBytes;

    @Option(names = "--idempotency-keys", description = "Give every message a unique idempotency key.")
    boolean idempotencyKeys;

    @Mixin
    BenchOptions.ReferenceRuns runs;

    @Override
    public Integer call() {
        ProduceBenchmark.Options options;
        try {
            options = new ProduceBenchmark.Options(globals().effectiveDatabaseUrl(), callers,
                    Durations.parse(duration.value), Durations.parse(warmup.value), payloadBytes.value, idempotencyKeys,
                    runs.value);
        } catch (IllegalArgumentException e) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, e.getMessage());
        }
        boolean json = jsonOutput();
        PrintWriter out = out();
        PrintWriter err = spec.commandLine().getErr();
        if (!json) {
            err.println(options.databaseUrl() == null
                    ? "starting a temporary embedded PostgreSQL..." : "connecting to the database...");
        }
        ProduceBenchmark.Result result;
        try {
            result = new ProduceBenchmark().run(options, listener(options, json, out, err));
        } catch (BenchmarkException e) {
            err.println("error: " + e.getMessage());
            return Main.FAILURE;
        }
        if (json) {
            out.println(BenchJson.line(result.summary()));
        } else {
            Map<String, Object> f = new LinkedHashMap<>();
            String median = result.runs().size() > 1 ? " (median)" : "";
            f.put("mean batch size" + median, String.format(Locale.ROOT, "%.2f", result.batchSize()));
            f.put("ours" + median, String.format(Locale.ROOT, "%.0f msgs/s", result.ours()));
            f.put(ProduceBenchmark.REFERENCE + median, String.format(Locale.ROOT, "%.0f msgs/s", result.reference()));
            f.put("ratio" + median, String.format(Locale.ROOT, "%.2f", result.ratio()));
            Output.fields(out, f);
        }
        out.flush();
        if (result.lost() != 0) {
            err.println("error: " + result.lost() + " messages were reported committed but are missing from the log");
            return Main.FAILURE;
        }
        return Main.OK;
    }

    /** Text: a header, then one line per run as it finishes (progress on stderr). JSON: one line per run. */
    private static ProduceBenchmark.Listener listener(ProduceBenchmark.Options options, boolean json,
                                                      PrintWriter out, PrintWriter err) {
        return new ProduceBenchmark.Listener() {
            @Override
            public void started(ProduceBenchmark.Environment env) {
                if (json) {
                    return;
                }
                Map<String, Object> f = new LinkedHashMap<>();
                f.put("scenario", ProduceBenchmark.SCENARIO);
                f.put("postgres", env.postgresVersion() + (env.embedded() ? " (embedded, temporary)" : ""));
                f.put("cores", env.cores());
                f.put("payload", options.payloadBytes() + " bytes");
                f.put("callers", options.callers());
                f.put("idempotency keys", options.idempotencyKeys() ? "one per message" : "none");
                f.put("duration", Durations.format(options.duration()) + " per phase after "
                        + (options.warmup().isZero() ? "no" : Durations.format(options.warmup()))
                        + " warm-up, " + options.runs() + (options.runs() == 1 ? " run" : " runs"));
                Output.fields(out, f);
                out.flush();
            }

            @Override
            public void phase(int run, String phase) {
                if (!json) {
                    err.println("run " + run + "/" + options.runs() + ": " + phase + "...");
                }
            }

            @Override
            public void finished(ProduceBenchmark.RunResult r) {
                if (json) {
                    out.println(BenchJson.line(r.toJson(options)));
                } else {
                    out.println(String.format(Locale.ROOT,
                            "run %d: ours %.0f msgs/s (batch %.2f), %s %.0f msgs/s (batch %.2f, %d connections), ratio %.2f",
                            r.run(), r.ours(), r.batchSize(), ProduceBenchmark.REFERENCE, r.reference(),
                            r.referenceBatchSize(), r.referenceConnections(), r.ratio()));
                }
                out.flush();
            }
        };
    }
}
