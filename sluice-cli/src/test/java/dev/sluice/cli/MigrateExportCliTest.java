package dev.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sluice migrate sql --format plain|flyway|liquibase --out DIR}: offline, idempotent, never overwriting a
 * different file, and every bad argument coded. (The real tools apply the files in sluice-core's MigrationExportTest.)
 */
class MigrateExportCliTest {
    @TempDir
    Path tmp;

    private static void expectCode(CliTest.Run run, String code) {
        assertThat(run.exit()).as(run.out() + run.err()).isEqualTo(Main.FAILURE);
        assertThat(run.err()).as(run.err()).contains("[" + code + "]").doesNotContain("\tat ");
    }

    @Test
    void flywayWritesOneFilePerStepAndAgainChangesNothing() throws Exception {
        Path dir = tmp.resolve("db/sluice");
        CliTest.Run first = CliTest.raw("migrate", "sql", "--format", "flyway", "--out", dir.toString(), "--schema", "app");
        assertThat(first.exit()).as(first.err()).isZero();
        assertThat(first.out()).contains("wrote").contains("V1__sluice_system_control_plane.sql")
                .contains("flyway export of schema 'app': 6 file(s) written, 0 unchanged");
        assertThat(Files.readString(dir.resolve("V1__sluice_system_control_plane.sql"))).contains("\"app\".system_config");

        CliTest.Run again = CliTest.raw("migrate", "sql", "--format", "flyway", "--out", dir.toString(), "--schema", "app",
                "-o", "json");
        assertThat(again.exit()).as(again.err()).isZero();
        JsonNode files = again.json();
        assertThat(files).hasSize(6);
        files.forEach(f -> assertThat(f.get("created").asBoolean()).isFalse());
        assertThat(files.get(5).get("path").asText()).endsWith("V6__sluice_system_api_tokens.sql");

        // Another schema's files differ: refused, and nothing written.
        expectCode(CliTest.raw("migrate", "sql", "--format", "flyway", "--out", dir.toString(), "--schema", "other"), "SLU-0124");
        try (var listing = Files.list(dir)) {
            assertThat(listing.count()).isEqualTo(6);
        }
    }

    @Test
    void versionStartAndLiquibase() throws Exception {
        Path flyway = tmp.resolve("shifted");
        CliTest.Run shifted = CliTest.raw("migrate", "sql", "--format", "FLYWAY", "--out", flyway.toString(),
                "--version-start", "100");
        assertThat(shifted.exit()).as(shifted.err()).isZero();
        assertThat(flyway.resolve("V100__sluice_system_control_plane.sql")).exists();
        assertThat(flyway.resolve("V105__sluice_system_api_tokens.sql")).exists();

        Path liquibase = tmp.resolve("lb");
        CliTest.Run lb = CliTest.raw("migrate", "sql", "--format", "liquibase", "--out", liquibase.toString());
        assertThat(lb.exit()).as(lb.err()).isZero();
        assertThat(liquibase.resolve("sluice-changelog.xml")).exists();
        assertThat(Files.readString(liquibase.resolve("sluice/V003__system_fleet.sql")))
                .contains("--changeset sluice:system-3-fleet");
    }

    @Test
    void plainStaysTheDefaultAndBadArgumentsAreCoded() throws Exception {
        CliTest.Run plain = CliTest.raw("migrate", "sql", "--schema", "app", "--stream-id", "3");
        assertThat(plain.exit()).isZero();
        assertThat(plain.out()).contains("CREATE SCHEMA IF NOT EXISTS \"app\"").contains("\"app\".message_log_3");
        assertThat(CliTest.raw("migrate", "sql", "--format", "plain").out()).contains("\"sluice\".message_log_1");

        Path file = Files.writeString(tmp.resolve("a-file"), "x");
        expectCode(CliTest.raw("migrate", "sql", "--format", "sqitch", "--out", tmp.toString()), "SLU-0015");
        expectCode(CliTest.raw("migrate", "sql", "--format", "flyway"), "SLU-0015");
        expectCode(CliTest.raw("migrate", "sql", "--format", "flyway", "--out", file.toString()), "SLU-0015");
        expectCode(CliTest.raw("migrate", "sql", "--format", "flyway", "--out", file.resolve("x").toString()), "SLU-0015");
        expectCode(CliTest.raw("migrate", "sql", "--format", "flyway", "--out", tmp.toString(), "--version-start", "0"),
                "SLU-0015");
        expectCode(CliTest.raw("migrate", "sql", "--format", "liquibase", "--out", tmp.toString(), "--version-start", "2"),
                "SLU-0015");
        expectCode(CliTest.raw("migrate", "sql", "--format", "flyway", "--out", tmp.toString(), "--stream-id", "2"),
                "SLU-0015");
        expectCode(CliTest.raw("migrate", "sql", "--out", tmp.toString()), "SLU-0015");
        expectCode(CliTest.raw("migrate", "sql", "--stream-id", "0"), "SLU-0003");
        try (var listing = Files.list(tmp)) {
            assertThat(listing.toList()).as("nothing written by a refused command").containsExactly(file);
        }

        CliTest.Run help = CliTest.raw("migrate", "sql", "-h");
        assertThat(help.exit()).isZero();
        assertThat(help.out()).contains("--format").contains("--out").contains("--version-start").contains("--stream-id");
    }
}
