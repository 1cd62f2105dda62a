package dev.sluice.cli;

import picocli.CommandLine.Command;

/**
 * {@code sluice bench SCENARIO}: benchmarks that print our figure beside a reference measured in the
 * same run on the same database (docs/benchmarks.md). Without {@code --database-url} they start a
 * temporary embedded PostgreSQL, never the persistent one in {@code --data-dir}, so a benchmark
 * neither reads nor leaves data there. Each scenario is a command of its own file ({@code Bench*Command}).
 */
@Command(name = "bench", description = "Benchmarks that report ours beside a reference measured in the same run.",
        subcommands = {BenchProduceCommand.class, BenchE2eCommand.class, BenchFanoutCommand.class,
                BenchLatencyCommand.class, BenchIdleCommand.class, BenchBacklogCommand.class, BenchQueueCommand.class,
                BenchAwaitCommand.class, BenchHttpCommand.class,
                BenchSoakCommand.class, BenchRebalanceCommand.class,
                LabCommand.class})
final class BenchCommand {
}
