package dev.sluice.cli;

import dev.sluice.ErrorCode;
import dev.sluice.MigrationStatus;
import dev.sluice.Migrations;
import dev.sluice.SluiceException;
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

    @Command(name = "sql", description = "Print the DDL with its ledger rows (--format plain, the default; needs no "
            + "database), or write one file per released control-plane step for Flyway or Liquibase into --out DIR.")
    static final class Sql extends Base {
        @Option(names = "--format", paramLabel = "FORMAT", defaultValue = "plain",
                description = "plain (print the control plane and one stream family to stdout), flyway "
                        + "(V<n>__sluice_system_<step>.sql files) or liquibase (sluice-changelog.xml and sluice/*.sql); "
                        + "default: ${DEFAULT-VALUE}.")
        String format;

        @Option(names = "--out", paramLabel = "DIR",
                description = "Folder the flyway or liquibase files go to (created when missing). Files already there "
                        + "with the same content are kept; a different one is refused (SLU-0124) and nothing is written.")
        java.nio.file.Path out;

        @Option(names = "--version-start", paramLabel = "N",
                description = "Flyway version of the first step (step v gets N+v-1; default 1). Never change it once "
                        + "files were applied.")
        Integer versionStart;

        @Option(names = "--stream-id", paramLabel = "ID",
                description = "Stream id to render the family for, plain format only (default: 1). Flyway and "
                        + "Liquibase exports hold the control plane; streams are registered by the migration role.")
        Long streamId;

        @Override
        public Integer call() {
            // Rendering needs no connection: build a client on an unused URL (no I/O happens).
            dev.sluice.Sluice offline = dev.sluice.Sluice.builder().jdbcUrl("jdbc:postgresql://localhost/unused")
                    .schema(globals().schema).build();
            if ("plain".equalsIgnoreCase(format.strip())) {
                if (out != null || versionStart != null) {
                    throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "--out and --version-start need --format flyway"
                            + " or liquibase (plain prints to stdout)");
                }
                out().print(offline.migrations().sql(streamId == null ? 1 : streamId));
                return Main.OK;
            }
            Migrations.Format f = Migrations.Format.parse(format);
            if (streamId != null) {
                throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "--stream-id applies to --format plain only: the "
                        + f.label() + " export holds the control plane, and streams are registered by the migration role");
            }
            if (out == null) {
                throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "--format " + f.label() + " needs --out DIR");
            }
            List<Migrations.ExportedFile> files = offline.migrations().export(f, out, versionStart == null ? 1 : versionStart);
            if (json()) {
                List<java.util.Map<String, Object>> items = new ArrayList<>();
                for (Migrations.ExportedFile file : files) {
                    java.util.Map<String, Object> m = new java.util.LinkedHashMap<>();
                    m.put("path", file.path().toString());
                    m.put("created", file.created());
                    items.add(m);
                }
                Output.json(out(), items);
            } else {
                long created = files.stream().filter(Migrations.ExportedFile::created).count();
                for (Migrations.ExportedFile file : files) {
                    out().println((file.created() ? "wrote     " : "unchanged ") + file.path());
                }
                out().println(f.label() + " export of schema '" + globals().schema + "': " + created + " file(s) written, "
                        + (files.size() - created) + " unchanged");
            }
            return Main.OK;
        }
    }
}
