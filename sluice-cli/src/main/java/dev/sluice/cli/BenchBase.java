package dev.sluice.cli;

import picocli.CommandLine.Option;

/**
 * The options every {@code sluice bench} scenario shares: {@code -h/--help}, and the hidden {@code --json}
 * that is the same as {@code -o json} (one JSON object per run, the summary last).
 */
abstract class BenchBase extends Base {
    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
    boolean help;

    @Option(names = "--json", hidden = true, description = "Same as -o json: one JSON object per run, the summary last.")
    boolean jsonFlag;

    /** Whether the result is printed as JSON lines ({@code -o json} or {@code --json}). */
    boolean jsonOutput() {
        return jsonFlag || json();
    }
}
