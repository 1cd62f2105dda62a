package dev.sluice.internal.schema;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The control plane's released steps as files for the schema owner's own migration tool: one file per step, each
 * the step's DDL followed by its {@code migration_log} row, so a schema built from them passes Sluice's gates.
 * <p>
 * A file's name and content depend only on the step, the schema and the export's settings, never on the Sluice
 * release that wrote it: released steps are append-only, so a later release writes the same files plus new ones,
 * and Flyway's or Liquibase's checksums of applied files keep matching. Stream families are not exported: they
 * are per stream id and need the stream's {@code stream_config} row, which registration writes (docs/migrations.md).
 */
public final class MigrationExport {
    /** The master changelog of the Liquibase export; it includes every file of {@link #LIQUIBASE_DIR}. */
    public static final String LIQUIBASE_CHANGELOG = "sluice-changelog.xml";
    /** The folder of the Liquibase export's step files, next to the master changelog. */
    public static final String LIQUIBASE_DIR = "sluice";

    /**
     * The master changelog. {@code includeAll} rather than one {@code include} per step, so the file never changes
     * across releases (a later release only adds step files, which sort in version order by name).
     */
    private static final String CHANGELOG = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!-- Sluice control plane for Liquibase, written by Sluice's export (sluice migrate sql, format liquibase).
                 Every file of sluice/ is one released Sluice step; never edit them (Liquibase and Sluice check
                 their checksums). A later Sluice release only adds files. -->
            <databaseChangeLog xmlns="http://www.liquibase.org/xml/ns/dbchangelog"
                    xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
                    xsi:schemaLocation="http://www.liquibase.org/xml/ns/dbchangelog
                        http://www.liquibase.org/xml/ns/dbchangelog/dbchangelog-latest.xsd">
                <includeAll path="sluice/" relativeToChangelogFile="true"/>
            </databaseChangeLog>
            """;

    /** The ledger row of a control-plane step. Parameters: schema (quoted), version, step name, checksum, applied by. */
    private static final String LEDGER_ROW = """
            INSERT INTO %1$s.migration_log (system_id, scope, version, step, checksum, applied_by)
              SELECT id, 'system', %2$d, '%3$s', '%4$s', '%5$s' FROM %1$s.system_config WHERE name = 'default';
            """;

    /**
     * Lines Liquibase's formatted-SQL parser reads as its own directives even after "-- ". A step holding one would
     * be cut or changed by Liquibase, so the export refuses it (a bug of the step, caught by the export tests).
     */
    private static final Pattern LIQUIBASE_DIRECTIVE = Pattern.compile(
            "(?im)^\\s*--\\s*(changeset|rollback|comment|precondition|property|validchecksum|ignorelines|include|liquibase)\\b");

    /** One file of an export: its path relative to the output folder (with '/'), and its content. */
    public record File(String path, String content) {
    }

    private final SchemaSteps steps;
    private final String q;

    /** An export of {@code steps} for the installation schema {@code quotedSchema}. No I/O. */
    public MigrationExport(SchemaSteps steps, String quotedSchema) {
        this.steps = steps;
        this.q = quotedSchema;
    }

    /**
     * The Flyway files: {@code V<n>__sluice_system_<step>.sql}, where {@code n = versionStart + version - 1} of the
     * step (so a step keeps its Flyway version as long as {@code versionStart} stays the same).
     */
    public List<File> flyway(int versionStart) {
        List<File> out = new ArrayList<>();
        for (MigrationStep step : steps.system()) {
            long version = (long) versionStart + step.version() - 1;
            String name = "V" + version + "__sluice_system_" + step.name() + ".sql";
            String header = "-- Sluice control plane step " + step.stepName() + " (sha256 " + step.checksum() + ") for schema "
                    + q + ",\n-- written by 'sluice migrate sql --format flyway'. Never edit: Flyway checks this file's"
                    + " checksum and Sluice the step's.\n";
            out.add(new File(name, header + body(step, "flyway")));
        }
        return out;
    }

    /**
     * The Liquibase files: the master {@link #LIQUIBASE_CHANGELOG} and one formatted-SQL changelog per step in
     * {@link #LIQUIBASE_DIR}, each holding one changeset with the stable id {@code system-<version>-<step>}.
     */
    public List<File> liquibase() {
        List<File> out = new ArrayList<>();
        out.add(new File(LIQUIBASE_CHANGELOG, CHANGELOG));
        for (MigrationStep step : steps.system()) {
            String sql = body(step, "liquibase");
            if (LIQUIBASE_DIRECTIVE.matcher(sql).find()) {
                throw new IllegalStateException("step " + step.stepName() + " holds a line Liquibase reads as a directive");
            }
            String text = "--liquibase formatted sql\n\n"
                    + "--changeset sluice:system-" + step.version() + "-" + step.name() + " runInTransaction:true\n"
                    + "--comment: Sluice control plane step " + step.stepName() + " (sha256 " + step.checksum()
                    + "); never edit: Liquibase checks this changeset's checksum and Sluice the step's.\n"
                    + sql;
            out.add(new File(LIQUIBASE_DIR + "/" + String.format("V%03d__system_%s.sql", step.version(), step.name()), text));
        }
        return out;
    }

    /**
     * The step's SQL for the schema and the ledger row Sluice's migrator writes for it. The schema itself is the
     * tool's to create (Flyway's {@code schemas}, or beforehand): the step's CREATE SCHEMA IF NOT EXISTS would need
     * CREATE on the database, which a migration role owning a pre-created schema does not have.
     */
    private String body(MigrationStep step, String appliedBy) {
        if (step.version() == 1 && !step.template().contains(MigrationStep.CREATE_SCHEMA)) {
            throw new IllegalStateException("step " + step.stepName() + " no longer creates the schema; released steps never change");
        }
        String sql = step.renderInExistingSchema(q, 0);
        return sql + (sql.endsWith("\n") ? "" : "\n") + "\n"
                + LEDGER_ROW.formatted(q, step.version(), step.stepName(), step.checksum(), appliedBy);
    }
}
