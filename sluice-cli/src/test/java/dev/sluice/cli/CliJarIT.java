package dev.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The built command ({@code target/sluice.jar}, made by {@code package}) run as a child process: a bad or
 * unreachable database URL gives a coded error and exit 1, never the password and never a stack trace
 * unless {@code --debug} asks for one. Runs in the integration-test phase, after the jar is built.
 */
class CliJarIT {
    static final String PASSWORD = "Hunter2-Secret";
    static final Path JAR = Path.of("target", "sluice.jar");

    @TempDir
    static Path dir;

    record Run(int exit, String out, String err, Duration took) {
        String all() {
            return out + err;
        }
    }

    @BeforeAll
    static void jarIsBuilt() {
        assumeTrue(Files.isRegularFile(JAR), "target/sluice.jar is built by 'mvn package' (this test runs in verify)");
    }

    static Run sluice(Map<String, String> env, String... args) throws Exception {
        // Each run is a short-lived JVM: the client compiler alone and the serial collector start it with
        // about a third less CPU (the same jar, the same output; ScheduleProcessesTest's children do the same).
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-jar", JAR.toString()));
        command.addAll(List.of(args));
        File out = Files.createTempFile(dir, "out", ".txt").toFile();
        File err = Files.createTempFile(dir, "err", ".txt").toFile();
        ProcessBuilder pb = new ProcessBuilder(command).redirectOutput(out).redirectError(err);
        pb.environment().remove("SLUICE_DATABASE_URL");
        pb.environment().remove("SLUICE_DEBUG");
        pb.environment().putAll(env);
        long start = System.nanoTime();
        Process p = pb.start();
        if (!p.waitFor(90, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("sluice " + String.join(" ", args) + " hung for 90 s");
        }
        return new Run(p.exitValue(), Files.readString(out.toPath(), StandardCharsets.UTF_8),
                Files.readString(err.toPath(), StandardCharsets.UTF_8), Duration.ofNanos(System.nanoTime() - start));
    }

    static void assertNoSecretNoTrace(Run r) {
        assertThat(r.all()).as(r.all()).doesNotContain(PASSWORD).doesNotContain("Hunter2").doesNotContain("\tat ")
                .doesNotContain("Exception");
    }

    @Test
    void malformedDatabaseUrlsAreCodedAndNeverPrintThePassword() throws Exception {
        List<String> urls = List.of(
                "jdbc:postgresql://localhost:notaport/app?user=me&password=" + PASSWORD,
                "jdbc:postgresql://localhost:notaport/app?user=me&password=" + PASSWORD.replace("-", "%2D"),
                "jdbc:postgresql://me:" + PASSWORD + "@localhost/app",
                "postgres://me:" + PASSWORD + "@localhost:notaport/app",
                "postgresql://me:" + PASSWORD.replace("S", "%53") + "@localhost:0/app",
                "jdbc:mysql://localhost/app?user=me&password=" + PASSWORD,
                "jdbc:postgresql://localhost/app?user=me&password=" + PASSWORD + "&loginTimeout=soon");
        // The URLs are independent: two at a time (each a few JVM starts), every check as before.
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<Future<?>> checks = new ArrayList<>();
            for (String url : urls) {
                checks.add(pool.submit(() -> {
                    checkMalformed(url);
                    return null;
                }));
            }
            for (Future<?> check : checks) {
                try {
                    check.get();
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof Error err) {
                        throw err; // the assertion itself, with its message
                    }
                    throw e;
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static void checkMalformed(String url) throws Exception {
        for (List<String> format : List.of(List.<String>of(), List.of("-o", "json"))) {
            List<String> args = new ArrayList<>(List.of("stream", "list", "--database-url", url));
            args.addAll(format);
            Run r = sluice(Map.of(), args.toArray(String[]::new));
            assertThat(r.exit()).as(r.all()).isEqualTo(Main.FAILURE);
            assertThat(r.all()).contains("SLU-0014");
            assertNoSecretNoTrace(r);
        }
        Run fromEnv = sluice(Map.of("SLUICE_DATABASE_URL", url), "queue", "list");
        assertThat(fromEnv.exit()).as(fromEnv.all()).isEqualTo(Main.FAILURE);
        assertThat(fromEnv.err()).contains("SLU-0014");
        assertNoSecretNoTrace(fromEnv);
        // --debug prints the stack trace, still without the password.
        Run debug = sluice(Map.of("SLUICE_DEBUG", "1"), "stream", "list", "--database-url", url);
        assertThat(debug.err()).contains("\tat ").contains("SLU-0014").doesNotContain(PASSWORD).doesNotContain("Hunter2");
    }

    @Test
    void anUnreachableDatabaseIsOneCodedErrorAndTheStackTraceOnlyWithDebug() throws Exception {
        // The demo builds its own connection pool: it too reports a coded error, not the pool's exception.
        String url = "postgres://me:" + PASSWORD + "@127.0.0.1:1/app";
        for (String command : List.of("demo", "system")) {
            Run plain = sluice(Map.of(), command.equals("demo") ? new String[] {"demo", "--database-url", url}
                    : new String[] {"system", "get", "--database-url", url});
            assertThat(plain.exit()).as(plain.all()).isEqualTo(Main.FAILURE);
            assertThat(plain.err().lines().filter(l -> l.startsWith("error: "))).hasSize(1);
            assertThat(plain.err()).contains("[SLU-0300]");
            assertNoSecretNoTrace(plain);
        }
        Run debug = sluice(Map.of(), "demo", "--debug", "--database-url", url);
        assertThat(debug.exit()).isEqualTo(Main.FAILURE);
        assertThat(debug.err()).contains("[SLU-0300]").contains("\tat ").doesNotContain(PASSWORD).doesNotContain("Hunter2");
    }

    @Test
    void aServerThatAcceptsButNeverAnswersIsACodedErrorWithinTheLoginTimeout() throws Exception {
        List<Socket> accepted = new CopyOnWriteArrayList<>();
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread acceptor = new Thread(() -> {
                while (!silent.isClosed()) {
                    try {
                        accepted.add(silent.accept());
                    } catch (Exception e) {
                        return;
                    }
                }
            }, "silent-server");
            acceptor.setDaemon(true);
            acceptor.start();
            String url = "jdbc:postgresql://127.0.0.1:" + silent.getLocalPort() + "/app?user=me&password=" + PASSWORD;
            Run r = sluice(Map.of(), "stream", "list", "--database-url", url, "-o", "json");
            assertThat(r.exit()).as(r.all()).isEqualTo(Main.FAILURE);
            assertThat(r.out()).contains("\"code\" : \"SLU-0300\"").contains("DATABASE_UNAVAILABLE");
            assertNoSecretNoTrace(r);
            assertThat(r.took()).as("login timeout 10 s, plus JVM start").isLessThan(Duration.ofSeconds(40));
            assertThat(accepted).as("the CLI did reach the server").isNotEmpty();
        } finally {
            for (Socket s : accepted) {
                s.close();
            }
        }
    }
}
