package dev.sluice.bench;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * JSON of benchmark results: one compact object per line (docs/benchmarks.md, "JSON output"), so
 * scripts can read the output line by line and take the last line as the summary.
 */
public final class BenchJson {
    private static final ObjectMapper JSON = new ObjectMapper();

    private BenchJson() {
    }

    /** One value as a single line of JSON (no line breaks inside). */
    public static String line(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot render benchmark result as JSON", e);
        }
    }

    /** Rounds for display and JSON: figures measured on a shared machine have no more digits than these. */
    static double round(double value, int decimals) {
        if (Double.isNaN(value) || Double.isInfinite(value)) {
            return value;
        }
        double scale = Math.pow(10, decimals);
        return Math.round(value * scale) / scale;
    }

    /** The median (mean of the middle two for an even count); NaN for none. */
    static double median(List<Double> values) {
        if (values.isEmpty()) {
            return Double.NaN;
        }
        double[] v = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        int mid = v.length / 2;
        return v.length % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
    }

    /** The head of a run line: {@code scenario}, {@code kind} = run, {@code run}. */
    static Map<String, Object> runLine(String scenario, int run) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("scenario", scenario);
        m.put("kind", "run");
        m.put("run", run);
        return m;
    }

    /**
     * The head of a summary line: {@code scenario}, {@code kind} = summary, the figures (see
     * {@link #putFigures}) and the environment ({@code postgres_version}, {@code cores}).
     */
    static Map<String, Object> summaryLine(String scenario, Object ours, Object reference, String referenceName,
                                           Object ratio, String unit, ProduceBenchmark.Environment environment) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("scenario", scenario);
        m.put("kind", "summary");
        putFigures(m, ours, reference, referenceName, ratio, unit);
        m.put("postgres_version", environment.postgresVersion());
        m.put("cores", environment.cores());
        return m;
    }

    /**
     * {@code ours}, {@code reference}, {@code reference_name} (left out when null: a scenario without a
     * reference), {@code ratio} and {@code unit}, rounded by the caller.
     */
    static Map<String, Object> putFigures(Map<String, Object> m, Object ours, Object reference, String referenceName,
                                          Object ratio, String unit) {
        m.put("ours", ours);
        m.put("reference", reference);
        if (referenceName != null) {
            m.put("reference_name", referenceName);
        }
        m.put("ratio", ratio);
        m.put("unit", unit);
        return m;
    }
}
