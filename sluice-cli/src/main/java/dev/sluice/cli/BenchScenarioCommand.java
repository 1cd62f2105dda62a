package dev.sluice.cli;

import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import dev.sluice.bench.BenchJson;
import dev.sluice.bench.BenchmarkException;
import dev.sluice.bench.ProduceBenchmark;
import dev.sluice.bench.ScenarioListener;
import dev.sluice.bench.ScenarioResult;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What the scenarios after {@code produce} share: the header, progress on stderr, one line per run, the
 * summary, and exit 1 when the result is untrustworthy (lost messages, ...). Each scenario names its
 * settings, runs its benchmark and picks the fields printed as text.
 */
abstract class BenchScenarioCommand extends BenchBase {
    /** The settings printed in the text header. */
    abstract Map<String, Object> settings();

    /** Whether the benchmark starts an embedded server (no database URL given). */
    boolean embedded() {
        return url() == null;
    }

    /** Runs the benchmark. */
    abstract ScenarioResult execute(ScenarioListener listener);

    /** Summary fields printed in text mode, in order (absent ones are skipped). */
    abstract List<String> textFields();

    /** Run-line fields printed in text mode, in order. */
    abstract List<String> runFields();

    String url() {
        return globals().effectiveDatabaseUrl();
    }

    static Duration duration(String text) {
        return Durations.parse(text);
    }

    @Override
    public Integer call() {
        boolean json = jsonOutput();
        PrintWriter out = out();
        PrintWriter err = spec.commandLine().getErr();
        ScenarioResult result;
        try {
            if (!json) {
                err.println(embedded() ? "starting a temporary embedded PostgreSQL..." : "connecting to the database...");
            }
            result = execute(new ScenarioListener() {
                @Override
                public void started(ProduceBenchmark.Environment env) {
                    if (json) {
                        return;
                    }
                    Map<String, Object> f = new LinkedHashMap<>();
                    f.put("scenario", spec.name());
                    f.put("postgres", env.postgresVersion() + (env.embedded() ? " (embedded, temporary)" : ""));
                    f.put("cores", env.cores());
                    f.putAll(settings());
                    Output.fields(out, f);
                    out.flush();
                }

                @Override
                public void phase(int run, String what) {
                    if (!json) {
                        err.println("run " + run + ": " + what + "...");
                    }
                }

                @Override
                public void finished(Map<String, Object> line) {
                    if (json) {
                        out.println(BenchJson.line(line));
                    } else {
                        StringBuilder b = new StringBuilder("run ").append(line.get("run")).append(':');
                        for (String k : runFields()) {
                            if (line.containsKey(k)) {
                                b.append(' ').append(k).append('=').append(text(line.get(k)));
                            }
                        }
                        out.println(b);
                    }
                    out.flush();
                }
            });
        } catch (IllegalArgumentException e) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, e.getMessage());
        } catch (BenchmarkException e) {
            err.println("error: " + e.getMessage());
            return Main.FAILURE;
        }
        Map<String, Object> summary = result.summary();
        if (json) {
            out.println(BenchJson.line(summary));
        } else {
            Map<String, Object> f = new LinkedHashMap<>();
            for (String k : textFields()) {
                if (summary.containsKey(k)) {
                    f.put(k, text(summary.get(k)));
                }
            }
            Output.fields(out, f);
        }
        out.flush();
        if (!result.problems().isEmpty()) {
            result.problems().forEach(p -> err.println("error: " + p));
            return Main.FAILURE;
        }
        return Main.OK;
    }

    private static String text(Object v) {
        if (v instanceof Double d) {
            return Math.abs(d) >= 100 ? String.format(Locale.ROOT, "%.0f", d) : String.format(Locale.ROOT, "%.3g", d);
        }
        return String.valueOf(v);
    }
}
