/**
 * The {@code sluice} command line (picocli): streams, consumer groups, queues, schedules, locks, migrations, the demo,
 * benchmarks and the lab, on the embedded server or any database URL ({@code docs/cli.md}).
 */
package dev.sluice.cli;
