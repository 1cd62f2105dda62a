package dev.sluice.cli;

import static dev.sluice.cli.CliTest.raw;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sluice.SluiceException;
import dev.sluice.cli.CliTest.Run;
import dev.sluice.embedded.EmbeddedConnection;
import dev.sluice.embedded.EmbeddedPostgresServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code sluice db url} and {@code sluice db psql}: reaching the embedded server's tables as its owner. */
class DbCliTest {

    @TempDir
    Path tmp;

    @Test
    void urlOfAGivenDatabaseHidesItsPasswordUnlessAsked() {
        String given = "jdbc:postgresql://db.example:5433/app?user=me&password=s3cret";
        Run hidden = raw("db", "url", "--database-url", given);
        assertThat(hidden.exit()).isZero();
        assertThat(hidden.out()).isEqualTo("jdbc:postgresql://db.example:5433/app?user=me&password=***\n");
        assertThat(raw("db", "url", "--database-url", given, "--show-password").out()).isEqualTo(given + "\n");
        assertThat(raw("db", "url", "--database-url", given, "--psql").out())
                .isEqualTo("postgresql://me:***@db.example:5433/app\n");
        assertThat(raw("db", "url", "--database-url", "postgresql://me:s3cret@db.example/app", "--psql", "--show-password").out())
                .as("the driver's default port made explicit").isEqualTo("postgresql://me:s3cret@db.example:5432/app\n");

        // Encoded values round-trip: decoded by the driver's parser, encoded again for either form.
        String encoded = "jdbc:postgresql://db.example:5433/my%20app?user=me&password=p%40ss%2Bw%20rd";
        assertThat(raw("db", "url", "--database-url", encoded, "--show-password").out()).isEqualTo(encoded + "\n");
        assertThat(raw("db", "url", "--database-url", encoded, "--psql", "--show-password").out())
                .isEqualTo("postgresql://me:p%40ss%2Bw%20rd@db.example:5433/my%20app\n");
        assertThat(raw("db", "url", "--database-url", "jdbc:postgresql://db:notaport/app?password=s3cret").err())
                .as("the same check as every other URL").contains("[SLU-0014]").doesNotContain("s3cret");

        Run bad = raw("db", "url", "--database-url", "mysql://me:s3cret@db.example/app");
        assertThat(bad.exit()).isEqualTo(Main.FAILURE);
        assertThat(bad.err()).contains("[SLU-0014]").doesNotContain("s3cret");
    }

    @Test
    void urlOfTheEmbeddedServerCarriesItsPasswordAndConnects() throws Exception {
        Path data = tmp.resolve("data");
        Run none = raw("db", "url", "--data-dir", data.toString());
        assertThat(none.exit()).isEqualTo(Main.FAILURE);
        assertThat(none.err()).contains("no embedded PostgreSQL is running").contains("[SLU-0015]");

        try (EmbeddedPostgresServer pg = EmbeddedPostgresServer.start(data)) {
            Run jdbc = raw("db", "url", "--data-dir", data.toString());
            assertThat(jdbc.exit()).isZero();
            assertThat(jdbc.out().strip()).isEqualTo(pg.jdbcUrl()).contains("password=" + pg.password());
            try (Connection c = DriverManager.getConnection(jdbc.out().strip()); Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT current_user")) {
                rs.next();
                assertThat(rs.getString(1)).isEqualTo("postgres");
            }
            assertThat(raw("db", "url", "--data-dir", data.toString(), "--psql").out().strip()).isEqualTo(pg.uri());
            assertThat(raw("db", "url", "--data-dir", data.toString(), "-o", "json").json().get("url").asText())
                    .isEqualTo(pg.jdbcUrl());
        }
        assertThat(raw("db", "url", "--data-dir", data.toString()).exit()).as("stopped again").isEqualTo(Main.FAILURE);
    }

    @Test
    void everyDbCommandAnswersHelp() {
        for (String[] args : new String[][] {{"db", "--help"}, {"db", "url", "-h"}, {"db", "psql", "--help"}}) {
            Run help = raw(args);
            assertThat(help.exit()).as(String.join(" ", args)).isZero();
            assertThat(help.out()).contains("Usage: sluice db");
        }
    }

    @Test
    void psqlThatIsNotInstalledIsToolNotFound() {
        Path data = tmp.resolve("data");
        System.setProperty(DbCommand.PSQL_PROPERTY, tmp.resolve("no-psql-here").toString());
        try {
            Run run = raw("db", "psql", "--data-dir", data.toString());
            assertThat(run.exit()).isEqualTo(Main.FAILURE);
            assertThat(run.err()).contains("[SLU-0402]");
            assertThat(Files.exists(data)).as("no server was started").isFalse();
        } finally {
            System.clearProperty(DbCommand.PSQL_PROPERTY);
        }
    }

    @Test
    void psqlRunsOnTheEmbeddedServerAndStopsItAfterwards() throws Exception {
        try {
            DbCommand.findPsql();
        } catch (SluiceException e) {
            assumeTrue(false, "psql is not installed");
        }
        Path data = tmp.resolve("data");
        Run made = raw("db", "psql", "--data-dir", data.toString(), "--",
                "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", "CREATE TABLE made_by_psql (v int)");
        assertThat(made.exit()).as(made.err()).isZero();
        Run failed = raw("db", "psql", "--data-dir", data.toString(), "--", "-X", "-q", "-c", "SELECT * FROM no_such_table");
        assertThat(failed.exit()).as("psql's own exit code").isEqualTo(1);
        assertThat(EmbeddedConnection.running(data)).as("the server started for psql is stopped").isEmpty();

        try (EmbeddedPostgresServer pg = EmbeddedPostgresServer.start(data);
             Connection c = pg.dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*) FROM made_by_psql")) {
            rs.next();
            assertThat(rs.getInt(1)).isZero();
        }
    }
}
