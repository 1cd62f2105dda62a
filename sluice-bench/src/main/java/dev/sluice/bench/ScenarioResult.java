package dev.sluice.bench;

import java.util.List;
import java.util.Map;

/**
 * The outcome of a scenario in the shape the CLI prints: where it ran, one JSON-ready line per run and
 * the summary (docs/benchmarks.md, "JSON output"), plus what makes the figures untrustworthy.
 */
public interface ScenarioResult {
    /** Where the benchmark ran. */
    ProduceBenchmark.Environment environment();

    /** One object per run (or per measured mode), in order; printed before the summary. */
    List<Map<String, Object>> runLines();

    /** The summary line: {@code scenario}, {@code ours}, {@code reference}, {@code ratio}, {@code unit}, ... */
    Map<String, Object> summary();

    /**
     * Problems that make the result untrustworthy (lost messages, a drain that timed out); empty when
     * none. The CLI prints them and exits 1: a benchmark that lost messages has no figure.
     */
    List<String> problems();
}
