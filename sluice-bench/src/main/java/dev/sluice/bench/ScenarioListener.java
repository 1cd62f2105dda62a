package dev.sluice.bench;

import java.util.Map;

/** Progress callbacks of a scenario (all optional), called on the thread that runs the benchmark. */
public interface ScenarioListener {
    /** A listener that ignores everything. */
    ScenarioListener NONE = new ScenarioListener() {
    };

    /** The server is reachable; the measurement begins. */
    default void started(ProduceBenchmark.Environment environment) {
    }

    /** A phase of a run begins ({@code what} names it, e.g. {@code "ours"} or the reference). */
    default void phase(int run, String what) {
    }

    /** A run (or a measured mode) finished; {@code line} is what {@link ScenarioResult#runLines()} will hold. */
    default void finished(Map<String, Object> line) {
    }
}
