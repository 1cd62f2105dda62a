package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.internal.schema.SchemaSteps;
import dev.sluice.internal.schema.Scope;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import liquibase.Liquibase;
import liquibase.database.Database;
import liquibase.database.DatabaseFactory;
import liquibase.database.jvm.JdbcConnection;
import liquibase.resource.DirectoryResourceAccessor;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.MigrateResult;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Flyway and Liquibase exports of docs/migrations.md, applied by the real tools to an empty schema: a client that
 * may not migrate then registers, produces, consumes and works a queue, and the gates report the schema current.
 * Exporting again is idempotent; a different file in the way is refused and nothing is written.
 */
@SluiceTest
class MigrationExportTest {
    /** Flyway's history table, kept apart from the application's own (docs/migrations.md). */
    static final String FLYWAY_TABLE = "sluice_schema_history";

    static {
        // Liquibase logs every file and statement through java.util.logging; its warnings are enough here.
        java.util.logging.Logger.getLogger("liquibase").setLevel(java.util.logging.Level.WARNING);
    }

    @TempDir
    Path tmp;

    /** The export needs no database: a client on an unused URL does no I/O. */
    private static Migrations offline(String schema) {
        return Sluice.builder().jdbcUrl("jdbc:postgresql://localhost/unused").schema(schema).build().migrations();
    }

    static Flyway flyway(TestDatabase db, String schema, Path dir) {
        return Flyway.configure().dataSource(db.dataSource()).schemas(schema).table(FLYWAY_TABLE)
                .locations("filesystem:" + dir.toAbsolutePath()).load();
    }

    @Test
    void flywayAppliesTheExportAndAClientThatMayNotMigrateRuns(TestDatabase db) throws Exception {
        String schema = db.freshSchemaName("flyway");
        Path dir = tmp.resolve("flyway");
        List<Migrations.ExportedFile> files = offline(schema).export(Migrations.Format.FLYWAY, dir);
        int steps = SchemaSteps.RELEASED.codeVersion(Scope.SYSTEM);
        assertThat(files).hasSize(steps).allMatch(Migrations.ExportedFile::created);
        assertThat(files.get(0).path().getFileName().toString()).isEqualTo("V1__sluice_system_control_plane.sql");
        assertThat(Files.readString(files.get(0).path())).contains("CREATE TABLE \"" + schema + "\".system_config")
                .contains("INSERT INTO \"" + schema + "\".migration_log").doesNotContain("{schema}");

        MigrateResult result = flyway(db, schema, dir).migrate();
        assertThat(result.migrationsExecuted).isEqualTo(steps);
        assertThat(result.targetSchemaVersion).isEqualTo(Integer.toString(steps));
        assertThat(shape(db, schema)).as("what Flyway built is what Sluice builds").isEqualTo(shape(db, sluiceBuilt(db)));

        runWithoutMigrating(db, schema);

        // Exporting again changes nothing, and Flyway finds nothing to do and nothing changed.
        assertThat(offline(schema).export(Migrations.Format.FLYWAY, dir)).hasSize(steps).noneMatch(Migrations.ExportedFile::created);
        flyway(db, schema, dir).validate();
        assertThat(flyway(db, schema, dir).migrate().migrationsExecuted).isZero();
    }

    @Test
    void aVersionStartShiftsTheFlywayVersionsOnly(TestDatabase db) throws Exception {
        String schema = db.freshSchemaName("flyway_start");
        Path dir = tmp.resolve("start");
        List<Migrations.ExportedFile> files = offline(schema).export(Migrations.Format.FLYWAY, dir, 1000);
        assertThat(files.get(0).path().getFileName().toString()).isEqualTo("V1000__sluice_system_control_plane.sql");
        assertThat(files.get(1).path().getFileName().toString()).isEqualTo("V1001__sluice_system_schedules.sql");
        Path plain = tmp.resolve("plain");
        List<Migrations.ExportedFile> ones = offline(schema).export(Migrations.Format.FLYWAY, plain);
        for (int i = 0; i < files.size(); i++) {
            assertThat(Files.readString(files.get(i).path())).as("the content does not depend on the version")
                    .isEqualTo(Files.readString(ones.get(i).path()));
        }
        assertThat(flyway(db, schema, dir).migrate().migrationsExecuted).isEqualTo(files.size());
        assertThat(current(db, schema)).isTrue();
    }

    @Test
    void liquibaseAppliesTheChangelogAndAClientThatMayNotMigrateRuns(TestDatabase db) throws Exception {
        String schema = db.freshSchemaName("liquibase");
        Path dir = tmp.resolve("liquibase");
        List<Migrations.ExportedFile> files = offline(schema).export(Migrations.Format.LIQUIBASE, dir);
        int steps = SchemaSteps.RELEASED.codeVersion(Scope.SYSTEM);
        assertThat(files).hasSize(steps + 1).allMatch(Migrations.ExportedFile::created);
        assertThat(files.get(0).path()).isEqualTo(dir.toAbsolutePath().resolve("sluice-changelog.xml"));
        assertThat(files.get(1).path()).isEqualTo(dir.toAbsolutePath().resolve("sluice/V001__system_control_plane.sql"));
        assertThat(Files.readString(files.get(1).path())).startsWith("--liquibase formatted sql")
                .contains("--changeset sluice:system-1-control_plane");

        db.execute("CREATE SCHEMA \"" + schema + "\""); // Liquibase's own tables go into it, so it must exist
        liquibaseUpdate(db, schema, dir);
        assertThat(ids(db, schema)).containsExactly("system-1-control_plane", "system-2-schedules", "system-3-fleet",
                "system-4-shards", "system-5-job_runs", "system-6-api_tokens");
        assertThat(shape(db, schema)).as("what Liquibase built is what Sluice builds").isEqualTo(shape(db, sluiceBuilt(db)));

        runWithoutMigrating(db, schema);

        assertThat(offline(schema).export(Migrations.Format.LIQUIBASE, dir)).noneMatch(Migrations.ExportedFile::created);
        liquibaseUpdate(db, schema, dir); // nothing to run, and no checksum error
        assertThat(ids(db, schema)).hasSize(steps);
    }

    /**
     * The files of released steps never change (Flyway and Liquibase keep the checksums of applied files): each file
     * of the export for schema {@code sluice} is pinned by its SHA-256 in {@code migration-export.sha256}. A new step
     * appends its lines there; an existing line never changes.
     */
    @Test
    void theFilesOfReleasedStepsNeverChange() throws Exception {
        List<String> actual = new ArrayList<>();
        for (Migrations.Format f : Migrations.Format.values()) {
            Path dir = tmp.resolve(f.label());
            for (Migrations.ExportedFile file : offline("sluice").export(f, dir)) {
                String digest = java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
                        .digest(Files.readAllBytes(file.path())));
                actual.add(f.label() + " " + dir.toAbsolutePath().relativize(file.path()).toString().replace('\\', '/')
                        + " " + digest);
            }
        }
        List<String> pinned;
        try (java.io.InputStream in = MigrationExportTest.class.getResourceAsStream("migration-export.sha256")) {
            assertThat(in).as("the pinned export").isNotNull();
            pinned = new String(in.readAllBytes(), StandardCharsets.UTF_8).lines()
                    .filter(l -> !l.isBlank() && !l.startsWith("#")).toList();
        }
        assertThat(actual).as("every pinned file is exported unchanged; append the lines of new steps").containsAll(pinned);
        assertThat(pinned).as("every exported file is pinned (append new steps' lines)").containsAll(actual);
    }

    @Test
    void aDifferentFileInTheWayIsRefusedAndNothingIsWritten() throws Exception {
        Path dir = tmp.resolve("tampered");
        List<Migrations.ExportedFile> files = offline("sluice").export(Migrations.Format.FLYWAY, dir);
        Path second = files.get(1).path();
        Files.writeString(second, Files.readString(second) + "-- an edit\n");
        Files.delete(files.get(3).path());
        assertThatThrownBy(() -> offline("sluice").export(Migrations.Format.FLYWAY, dir))
                .isInstanceOfSatisfying(SluiceException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.MIGRATION_FILE_CONFLICT);
                    assertThat(e.getMessage()).contains(second.getFileName().toString()).contains("nothing was written");
                });
        assertThat(files.get(3).path()).as("nothing written on a conflict").doesNotExist();

        // Another schema's export is other content: refused too.
        Path other = tmp.resolve("other");
        offline("sluice").export(Migrations.Format.LIQUIBASE, other);
        assertThatThrownBy(() -> offline("app_sluice").export(Migrations.Format.LIQUIBASE, other))
                .isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.MIGRATION_FILE_CONFLICT));
        assertThat(Files.list(other.resolve("sluice"))).as("no temporary files left").allMatch(p -> p.toString().endsWith(".sql"));
    }

    @Test
    void badInputIsCoded() throws Exception {
        Path file = Files.writeString(tmp.resolve("a-file"), "x", StandardCharsets.UTF_8);
        Migrations m = offline("sluice");
        assertCode(ErrorCode.INVALID_ARGUMENT, () -> m.export(Migrations.Format.FLYWAY, file));
        assertCode(ErrorCode.INVALID_ARGUMENT, () -> m.export(Migrations.Format.FLYWAY, file.resolve("below")));
        assertCode(ErrorCode.INVALID_ARGUMENT, () -> m.export(Migrations.Format.FLYWAY, null));
        assertCode(ErrorCode.INVALID_ARGUMENT, () -> m.export(null, tmp));
        assertCode(ErrorCode.INVALID_ARGUMENT, () -> m.export(Migrations.Format.FLYWAY, tmp, 0));
        assertCode(ErrorCode.INVALID_ARGUMENT, () -> m.export(Migrations.Format.LIQUIBASE, tmp, 5));
        assertCode(ErrorCode.INVALID_ARGUMENT, () -> Migrations.Format.parse("sqitch"));
        assertCode(ErrorCode.INVALID_ARGUMENT, () -> Migrations.Format.parse(null));
        assertThat(Migrations.Format.parse(" Flyway ")).isEqualTo(Migrations.Format.FLYWAY);
        assertThat(Files.list(tmp)).containsExactly(file);
    }

    private static void assertCode(ErrorCode code, org.assertj.core.api.ThrowableAssert.ThrowingCallable call) {
        assertThatThrownBy(call).isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(code));
    }

    /** A client built with {@code migrate(false)} registers a stream, produces, consumes and works a queue. */
    static void runWithoutMigrating(TestDatabase db, String schema) {
        assertThat(current(db, schema)).as("the gates accept the tool's schema").isTrue();
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(schema).migrate(false).build()) {
            sluice.stream("orders").register(StreamConfig.builder().partitionSize(100).build());
            sluice.stream("orders").consumerGroup("billing").register();
            Set<String> received = ConcurrentHashMap.newKeySet();
            try (Consumption c = sluice.stream("orders", String.class).consumerGroup("billing").consume(m -> {
                received.add(m.payload());
                return Outcome.success();
            })) {
                Producer<String> p = sluice.stream("orders", String.class).producer();
                for (int i = 0; i < 3; i++) {
                    p.produce("o-" + i);
                }
                await().atMost(Duration.ofSeconds(30)).until(() -> received.size() == 3);
            }
            Queue<String> jobs = sluice.queue("emails", String.class);
            jobs.enqueue("welcome");
            Set<String> done = ConcurrentHashMap.newKeySet();
            try (Worker w = jobs.work(job -> done.add(job.payload()))) {
                await().atMost(Duration.ofSeconds(30)).until(() -> done.contains("welcome"));
            }
            assertThat(sluice.migrations().status()).hasSize(2)
                    .allSatisfy(s -> assertThat(s.state()).isEqualTo(MigrationStatus.State.CURRENT));
        }
        assertThat(current(db, schema)).isTrue();
    }

    private static boolean current(TestDatabase db, String schema) {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(schema).migrate(false).build()) {
            List<MigrationStatus> status = sluice.migrations().status();
            return !status.isEmpty() && status.stream().allMatch(s -> s.state() == MigrationStatus.State.CURRENT);
        }
    }

    /** A schema Sluice's own migrator installed, to compare with. */
    private static String sluiceBuilt(TestDatabase db) {
        String schema = db.freshSchemaName("reference");
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(schema).build()) {
            sluice.migrations().up();
        }
        return schema;
    }

    private static void liquibaseUpdate(TestDatabase db, String schema, Path dir) throws Exception {
        try (Connection c = db.connect()) {
            Database database = DatabaseFactory.getInstance().findCorrectDatabaseImplementation(new JdbcConnection(c));
            database.setDefaultSchemaName(schema);
            database.setLiquibaseSchemaName(schema);
            try (Liquibase liquibase = new Liquibase("sluice-changelog.xml", new DirectoryResourceAccessor(dir), database)) {
                liquibase.update("");
            }
        }
    }

    private static List<String> ids(TestDatabase db, String schema) throws Exception {
        List<String> out = new ArrayList<>();
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement("SELECT id FROM \"" + schema
                + "\".databasechangelog ORDER BY orderexecuted"); ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        }
        return out;
    }

    /**
     * The schema's columns, indexes, constraints and ledger rows (version, step, checksum), with the schema's name
     * replaced and the migration tools' own tables left out.
     */
    static String shape(TestDatabase db, String schema) throws Exception {
        String sql = """
                SELECT x FROM (
                  SELECT 'col ' || table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' '
                         || coalesce(column_default, '') AS x, table_name AS t
                    FROM information_schema.columns WHERE table_schema = ?
                  UNION ALL SELECT 'idx ' || indexdef, tablename FROM pg_indexes WHERE schemaname = ?
                  UNION ALL SELECT 'con ' || c.conname || ' ' || pg_get_constraintdef(c.oid), r.relname
                    FROM pg_constraint c JOIN pg_class r ON r.oid = c.conrelid JOIN pg_namespace n ON n.oid = r.relnamespace
                   WHERE n.nspname = ?
                ) o WHERE t NOT IN ('sluice_schema_history', 'databasechangelog', 'databasechangeloglock') ORDER BY x""";
        StringBuilder out = new StringBuilder();
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, schema);
            ps.setString(2, schema);
            ps.setString(3, schema);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.append(rs.getString(1).replace(schema, "S")).append('\n');
                }
            }
            try (PreparedStatement ledger = c.prepareStatement("SELECT scope || ' ' || version || ' ' || step || ' ' || checksum"
                    + " FROM \"" + schema + "\".migration_log ORDER BY scope, version"); ResultSet rs = ledger.executeQuery()) {
                while (rs.next()) {
                    out.append("ledger ").append(rs.getString(1)).append('\n');
                }
            }
        }
        assertThat(out).as("a schema with tables").contains("col system_config.id");
        return out.toString();
    }
}
