package dev.sluice.bench;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;

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
}
