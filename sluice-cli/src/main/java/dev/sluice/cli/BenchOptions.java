package dev.sluice.cli;

import picocli.CommandLine.Option;

/**
 * Options that several {@code sluice bench} scenarios take with the same flag, default and help text,
 * each declared once here and mixed into a scenario with {@code @Mixin}.
 */
final class BenchOptions {
    private BenchOptions() {
    }

    /** {@code --payload-bytes}: produce, e2e, fanout, latency, backlog and queue. */
    static final class PayloadBytes {
        @Option(names = "--payload-bytes", paramLabel = "N", defaultValue = "1024",
                description = "Payload size in bytes (default: ${DEFAULT-VALUE}).")
        int value;
    }

    /** {@code --warmup} before each measured window: produce, e2e, fanout and latency. */
    static final class Warmup {
        @Option(names = "--warmup", paramLabel = "DURATION", defaultValue = "3s",
                description = "Warm-up before each window, not counted (default: ${DEFAULT-VALUE}).")
        String value;
    }

    /** {@code --duration} of each phase (ours, then the reference): produce, e2e and fanout. */
    static final class PhaseDuration {
        @Option(names = "--duration", paramLabel = "DURATION", defaultValue = "20s",
                description = "Measured window of each phase (default: ${DEFAULT-VALUE}).")
        String value;
    }

    /** {@code --runs} of ours and the reference: produce, e2e and fanout. */
    static final class ReferenceRuns {
        @Option(names = "--runs", paramLabel = "K", defaultValue = "1",
                description = "Repeat ours and the reference K times; report the medians (default: ${DEFAULT-VALUE}).")
        int value;
    }
}
