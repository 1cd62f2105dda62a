package dev.sluice;

import dev.sluice.internal.catalog.MigrationAdmin;
import dev.sluice.internal.schema.ExportWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Operator access to the schema's migrations ({@code sluice migrate status|up|sql}). Obtain it from
 * {@link Sluice#migrations()}.
 */
public final class Migrations {
    private final MigrationAdmin admin;

    Migrations(MigrationAdmin admin) {
        this.admin = admin;
    }

    /** The migration tools {@link #export} writes files for (docs/migrations.md). */
    public enum Format {
        /** Versioned SQL migrations, {@code V<n>__sluice_system_<step>.sql}. */
        FLYWAY,
        /** A master changelog ({@code sluice-changelog.xml}) including one formatted-SQL changelog per step. */
        LIQUIBASE;

        /** The format of a name such as {@code flyway} (any case), else {@link ErrorCode#INVALID_ARGUMENT}. */
        public static Format parse(String name) {
            for (Format f : values()) {
                if (f.name().equalsIgnoreCase(name == null ? "" : name.strip())) {
                    return f;
                }
            }
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "unknown migration format '" + name
                    + "'; use flyway or liquibase");
        }

        /** The name as written on the command line. */
        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * One file of an export.
     *
     * @param path    where it is
     * @param created whether this export wrote it ({@code false}: an identical file was there already)
     */
    public record ExportedFile(Path path, boolean created) {
    }

    /** The state of the control plane and of every stream family; gate problems are reported, not thrown. */
    public List<MigrationStatus> status() {
        return admin.status();
    }

    /**
     * Applies every pending step (installing the control plane when absent) in one transaction under
     * the schema lock, and returns the resulting status. A newer or tampered ledger raises
     * {@link ErrorCode#DATABASE_NEWER} or {@link ErrorCode#MIGRATION_CHECKSUM_MISMATCH} and applies nothing.
     */
    public List<MigrationStatus> up() {
        return admin.up();
    }

    /**
     * The complete DDL of the control plane and of one stream family (for the given stream id), with
     * the {@code migration_log} rows that make the gates accept a schema built from it.
     */
    public String sql(long streamId) {
        if (streamId < 1) {
            throw new SluiceException(ErrorCode.INVALID_CONFIG, "stream id must be at least 1 (got " + streamId + ")");
        }
        return admin.sql(streamId);
    }

    /** {@link #export(Format, Path, int)} with Flyway versions starting at 1. */
    public List<ExportedFile> export(Format format, Path dir) {
        return export(format, dir, 1);
    }

    /**
     * Writes the control plane's released steps as files for a migration tool into {@code dir} (created when
     * missing): one file per step, its DDL plus its {@code migration_log} row, so a schema the tool builds passes
     * Sluice's gates with {@code migrate(false)}. Needs no database. A file's name and content never change across
     * Sluice releases (a later release only adds files), and a file already present with the same content is kept,
     * so exporting again is idempotent. Stream families are made by registration, as the migration role.
     *
     * @param versionStart the Flyway version of the first step (the step of version {@code v} gets
     *                     {@code versionStart + v - 1}); keep it once files were applied. Must be 1 for Liquibase.
     * @return every file of the export, in order
     * @throws SluiceException {@link ErrorCode#INVALID_ARGUMENT} for a {@code dir} that is not a writable folder or a
     *                         {@code versionStart} below 1, {@link ErrorCode#MIGRATION_FILE_CONFLICT} when a file of
     *                         the export exists with other content (nothing is written then)
     */
    public List<ExportedFile> export(Format format, Path dir, int versionStart) {
        if (format == null) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "the export needs a format (flyway or liquibase)");
        }
        if (versionStart < 1 || versionStart > 1_000_000_000) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "the version start must be between 1 and 1000000000 (got "
                    + versionStart + ")");
        }
        if (format == Format.LIQUIBASE && versionStart != 1) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "a version start applies to the flyway format only");
        }
        List<ExportWriter.Written> written = format == Format.FLYWAY
                ? admin.exportFlyway(dir, versionStart) : admin.exportLiquibase(dir);
        return written.stream().map(w -> new ExportedFile(w.path(), w.created())).toList();
    }
}
