package dev.sluice.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Finding 1 of issue 11: the embedded server shuts other local users out and survives a kill -9 of its owner. */
class EmbeddedServerSecurityTest {

    @TempDir
    Path tmp;

    @Test
    void refusesConnectionsWithoutThePasswordOrWithAWrongOne() throws Exception {
        try (EmbeddedPostgresServer pg = EmbeddedPostgresServer.start(tmp.resolve("data"))) {
            String bare = "jdbc:postgresql://localhost:" + pg.port() + "/postgres?user=postgres";
            assertThatThrownBy(() -> DriverManager.getConnection(bare).close())
                    .isInstanceOf(SQLException.class)
                    .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isIn("08004", "28P01"));
            assertThatThrownBy(() -> DriverManager.getConnection(bare + "&password=not-the-secret").close())
                    .isInstanceOf(SQLException.class)
                    .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("28P01"));
            try (Connection c = pg.dataSource().getConnection(); Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT current_user")) {
                rs.next();
                assertThat(rs.getString(1)).isEqualTo("postgres");
            }
            // PostgreSQL's full 4096 SCRAM iterations (only the test kit's own throw-away server uses fewer).
            try (Connection c = pg.dataSource().getConnection(); Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT rolpassword FROM pg_authid WHERE rolname = 'postgres'")) {
                rs.next();
                assertThat(rs.getString(1)).startsWith("SCRAM-SHA-256$4096:");
            }
        }
    }

    @Test
    void theServerLoadsOnlyPasswordRulesAndNoTrustLine() throws Exception {
        Path data = tmp.resolve("data");
        try (EmbeddedPostgresServer pg = EmbeddedPostgresServer.start(data);
             Connection c = pg.dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT type, auth_method FROM pg_hba_file_rules ORDER BY rule_number")) {
            List<String> rules = new ArrayList<>();
            while (rs.next()) {
                rules.add(rs.getString(1) + " " + rs.getString(2));
            }
            assertThat(rules).containsExactly("local scram-sha-256", "host scram-sha-256", "host scram-sha-256");
        }
        List<String> lines = Files.readAllLines(data.resolve("pg_hba.conf")).stream()
                .filter(l -> !l.isBlank() && !l.strip().startsWith("#")).toList();
        assertThat(lines).hasSize(3).noneMatch(l -> l.contains("trust")).allMatch(l -> l.endsWith("scram-sha-256"));
    }

    @Test
    void socketAndDataDirectoryAreNotReachableByOtherUsers() throws Exception {
        assumeTrue(FilePermissions.posix(tmp.getFileSystem()), "POSIX permissions");
        Path data = tmp.resolve("data");
        try (EmbeddedPostgresServer pg = EmbeddedPostgresServer.start(data)) {
            assertThat(pg.setting("unix_socket_directories")).isEqualTo("\"" + data + "\"");
            Path socket = data.resolve(".s.PGSQL." + pg.port());
            assertThat(Files.exists(socket)).isTrue();
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(socket))).isEqualTo("rwx------");
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(data))).isEqualTo("rwx------");
            assertThat(Files.exists(Path.of(System.getProperty("java.io.tmpdir"), ".s.PGSQL." + pg.port()))).isFalse();
            assertThat(Files.exists(Path.of("/tmp", ".s.PGSQL." + pg.port()))).isFalse();
        }
    }

    @Test
    void thePasswordIsKeptInAnOwnerOnlyFileInTheDataDirectory() throws Exception {
        assumeTrue(FilePermissions.posix(tmp.getFileSystem()), "POSIX permissions");
        Path data = tmp.resolve("data");
        String password;
        try (EmbeddedPostgresServer pg = EmbeddedPostgresServer.start(data)) {
            password = pg.password();
            assertThat(pg.passwordFile()).isEqualTo(data.resolve("sluice-password"));
            assertThat(Files.readString(pg.passwordFile()).strip()).isEqualTo(password).hasSize(32);
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(pg.passwordFile()))).isEqualTo("rw-------");
            assertThat(pg.jdbcUrl()).contains("password=" + password);
            assertThat(pg.uri()).isEqualTo("postgresql://postgres:" + password + "@localhost:" + pg.port() + "/postgres");
        }
        try (EmbeddedPostgresServer pg = EmbeddedPostgresServer.start(data)) {
            assertThat(pg.password()).as("the password is kept across restarts").isEqualTo(password);
        }
        try (EmbeddedPostgresServer other = EmbeddedPostgresServer.start(tmp.resolve("other"))) {
            assertThat(other.password()).as("every cluster has its own").isNotEqualTo(password);
        }
    }

    @Test
    void theOwnerReachesTheTablesWithPsqlThroughThePrivateSocket() throws Exception {
        Path psql = Path.of("/usr/bin/psql");
        assumeTrue(Files.isExecutable(psql), "psql is not installed");
        Path data = tmp.resolve("data");
        try (EmbeddedPostgresServer pg = EmbeddedPostgresServer.start(data)) {
            List<String> cmd = List.of(psql.toString(), "-h", data.toString(), "-p", Integer.toString(pg.port()),
                    "-U", "postgres", "-d", "postgres", "-w", "-tAc", "SELECT 40 + 2");
            assertThat(runPsql(cmd, pg.password())).isEqualTo("0 42");
            assertThat(runPsql(cmd, null)).startsWith("2 ");
            assertThat(runPsql(cmd, "wrong")).startsWith("2 ");
        }
    }

    @Test
    void anUnwritableHomeFallsBackToAPrivateDirectoryInTheTemporaryDirectory() throws Exception {
        Path temp = Files.createDirectories(tmp.resolve("t"));
        Path data = tmp.resolve("home-less-data");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        // /proc refuses every mkdir, even root's: the user's cache directory cannot be created.
        ProcessBuilder pb = new ProcessBuilder(java, "-Xmx128m", "-XX:TieredStopAtLevel=1",
                "-Duser.home=/proc/sluice-no-home", "-Djava.io.tmpdir=" + temp, "-cp",
                System.getProperty("java.class.path"), ServerChild.class.getName(), data.toString())
                .redirectErrorStream(true);
        pb.environment().remove("XDG_CACHE_HOME");
        Process child = pb.start();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            List<String> lines = new ArrayList<>();
            String line;
            while ((line = r.readLine()) != null && !line.equals("READY")) {
                lines.add(line);
            }
            assertThat(line).as("the child started its server; it printed %s", lines).isEqualTo("READY");
            String user = System.getProperty("user.name").replaceAll("[^A-Za-z0-9._-]", "_");
            Path fallback = temp.resolve("sluice-" + user + "-postgres");
            assertThat(Files.getPosixFilePermissions(fallback)).isEqualTo(PosixFilePermissions.fromString("rwx------"));
            try (Stream<Path> dirs = Files.list(fallback)) {
                assertThat(dirs.filter(d -> d.getFileName().toString().startsWith("PG-"))
                        .anyMatch(d -> Files.isExecutable(d.resolve("bin").resolve("postgres")))).isTrue();
            }
        } finally {
            child.destroy(); // SIGTERM: the child's shutdown hook stops its server
            assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();
        }
    }

    @Test
    void aServerLeftRunningByAKilledOwnerIsStoppedOnTheNextStart() throws Exception {
        assumeTrue(ProcessHandle.current().info().command().isPresent(), "process information");
        Path data = tmp.resolve("data");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process child = new ProcessBuilder(java, "-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp",
                System.getProperty("java.class.path"), ServerChild.class.getName(), data.toString())
                .redirectErrorStream(true).start();
        List<String> lines = new CopyOnWriteArrayList<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    lines.add(line);
                }
            } catch (java.io.IOException ignored) {
                // The child was killed.
            }
        });
        reader.setDaemon(true);
        reader.start();
        try {
            await().atMost(Duration.ofMinutes(2)).untilAsserted(() -> {
                assertThat(child.isAlive()).as("child output: %s", lines).isTrue();
                assertThat(lines).contains("READY");
            });
            long postmaster = StaleServer.read(data).orElseThrow().pid();

            // While the owner lives, a second start fails at once and names the server.
            long t0 = System.nanoTime();
            assertThatThrownBy(() -> EmbeddedPostgresServer.start(data).close())
                    .hasMessageContaining("in use by another running process").hasMessageContaining("pid " + postmaster);
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(10));

            child.destroyForcibly();
            assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(ProcessHandle.of(postmaster).map(h -> StaleServer.isPostmasterOf(h, data)))
                    .as("kill -9 of the owner leaves its postmaster running").contains(true);

            long start = System.nanoTime();
            try (EmbeddedPostgresServer pg = EmbeddedPostgresServer.start(data)) {
                assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(20));
                try (Connection c = pg.dataSource().getConnection(); Statement s = c.createStatement();
                     ResultSet rs = s.executeQuery("SELECT v FROM before_kill")) {
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getInt(1)).isEqualTo(7);
                    assertThat(rs.next()).isFalse();
                }
                assertThat(StaleServer.read(data).orElseThrow().pid()).isNotEqualTo(postmaster);
                // Gone, or a zombie no one reaps (as under a container's init): either way no postgres of this directory.
                assertThat(ProcessHandle.of(postmaster).map(h -> StaleServer.isPostmasterOf(h, data)).orElse(false)).isFalse();
            }
        } finally {
            child.destroyForcibly();
        }
    }

    @Test
    void aTrustClusterOfAnOlderSluiceGetsAPasswordOnStart() throws Exception {
        Path data = tmp.resolve("legacy");
        Files.createDirectories(data);
        // The way zonky (and so Sluice before this fix) created clusters.
        PgCommand.Result init = PgCommand.run(PostgresBinaries.command(PostgresBinaries.prepare(), "initdb",
                "-A", "trust", "-U", "postgres", "-D", data.toString(), "-E", "UTF-8", "--locale=C"), null, Duration.ofMinutes(2));
        assertThat(init.exitCode()).as(init.output()).isZero();
        assertThat(Files.readString(data.resolve("pg_hba.conf"))).contains("trust");

        try (EmbeddedPostgresServer pg = EmbeddedPostgresServer.start(data)) {
            assertThat(Files.exists(pg.passwordFile())).isTrue();
            assertThat(Files.readString(data.resolve("pg_hba.conf"))).doesNotContain("trust");
            assertThatThrownBy(() -> DriverManager.getConnection(
                    "jdbc:postgresql://localhost:" + pg.port() + "/postgres?user=postgres").close())
                    .isInstanceOf(SQLException.class);
            try (Connection c = pg.dataSource().getConnection(); Statement s = c.createStatement()) {
                s.execute("CREATE TABLE upgraded (v int)");
            }
        }
        try (EmbeddedPostgresServer pg = EmbeddedPostgresServer.start(data);
             Connection c = pg.dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*) FROM upgraded")) {
            rs.next();
            assertThat(rs.getInt(1)).isZero();
        }
    }

    @Test
    void binariesComeFromAPrivateCacheDirectory() throws Exception {
        assumeTrue(FilePermissions.posix(tmp.getFileSystem()), "POSIX permissions");
        Path pgDir = PostgresBinaries.prepare();
        Path root = PostgresBinaries.cacheRoot();
        assertThat(pgDir.getParent()).isEqualTo(root);
        assertThat(pgDir.startsWith(Path.of(System.getProperty("java.io.tmpdir")))).isFalse();
        assertThat(Files.getAttribute(root, "unix:uid")).isEqualTo((int) FilePermissions.currentUid());
        String mode = PosixFilePermissions.toString(Files.getPosixFilePermissions(root));
        assertThat(mode.substring(3)).as("no group or other access to " + root).isEqualTo("------");
        assertThat(Files.isExecutable(pgDir.resolve("bin/postgres"))).isTrue();
    }

    @Test
    void aCacheDirectoryOwnedBySomeoneElseIsRefused() throws Exception {
        assumeTrue(FilePermissions.currentUid() == 0, "changing a directory's owner needs root");
        Path planted = Files.createDirectory(tmp.resolve("planted"));
        Files.setAttribute(planted, "unix:uid", 4242);
        assertThatThrownBy(() -> PostgresBinaries.privateDirectory(planted))
                .hasRootCauseMessage(planted + " belongs to uid 4242, not to the current user (uid 0); "
                        + "remove it or choose another directory");
    }

    /** Runs psql with a clean environment; returns "exit output". */
    private static String runPsql(List<String> cmd, String password) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().keySet().removeIf(k -> k.startsWith("PG"));
        pb.environment().put("PGPASSFILE", "/dev/null");
        if (password != null) {
            pb.environment().put("PGPASSWORD", password);
        }
        Process p = pb.start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return p.exitValue() + " " + out;
    }
}
