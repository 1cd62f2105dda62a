package dev.sluice.cli;

import dev.sluice.MigrationStatus;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "migrate", description = "Inspect and apply schema migrations.",
        subcommands = {MigrateCommand.Status.class, MigrateCommand.Up.class, MigrateCommand.Sql.class})
final class MigrateCommand {

    /** Prints the status; returns 1 when any scope is newer or tampered, 0 otherwise. */
    static int print(Base cmd, List<MigrationStatus> status) {
        if (cmd.json()) {
            Output.json(cmd.out(), status.stream().map(Output::migration).toList());
        } else {
            List<List<String>> rows = new ArrayList<>();
            for (MigrationStatus s : status) {
                rows.add(List.of(s.scope(), s.name(), s.streamId() == null ? "-" : s.streamId().toString(),
                        Integer.toString(s.databaseVersion()), Integer.toString(s.codeVersion()),
                        s.state().name().toLowerCase(java.util.Locale.ROOT)));
            }
            Output.table(cmd.out(), List.of("SCOPE", "NAME", "STREAM_ID", "DATABASE", "CODE", "STATE"), rows);
            for (MigrationStatus s : status) {
                if (s.problem() != null) {
                    cmd.out().println("  " + s.name() + ": " + s.problem());
                }
            }
        }
        boolean broken = status.stream().anyMatch(s -> s.state() == MigrationStatus.State.NEWER
                || s.state() == MigrationStatus.State.CHECKSUM_MISMATCH);
        return broken ? Main.FAILURE : Main.OK;
    }

    @Command(name = "status", description = "Show each scope's database and code versions (exit 1 if any is newer or tampered).")
    static final class Status extends Base {
        @Override
        public Integer call() {
            try (CliContext ctx = open()) {
                return print(this, ctx.sluice().migrations().status());
            }
        }
    }

    @Command(name = "up", description = "Apply every pending step in one transaction (installs the control plane if missing).")
    static final class Up extends Base {
        @Override
        public Integer call() {
            try (CliContext ctx = open()) {
                return print(this, ctx.sluice().migrations().up());
            }
        }
    }

    @Command(name = "sql", description = "Print the complete DDL of the control plane and of one stream family, "
            + "with ledger rows, for Flyway or Liquibase. Needs no database.")
    static final class Sql extends Base {
        @Option(names = "--stream-id", paramLabel = "ID", defaultValue = "1",
                description = "Stream id to render the family for (default: ${DEFAULT-VALUE}).")
        long streamId;

        @Override
        public Integer call() {
            // Rendering needs no connection: build a client on an unused URL (no I/O happens).
            dev.sluice.Sluice offline = dev.sluice.Sluice.builder().jdbcUrl("jdbc:postgresql://localhost/unused")
                    .schema(globals().schema).build();
            out().print(offline.migrations().sql(streamId));
            return Main.OK;
        }
    }
}
