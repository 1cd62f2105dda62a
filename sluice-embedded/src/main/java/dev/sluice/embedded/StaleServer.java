package dev.sluice.embedded;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A postmaster left running by a process that died without stopping it (kill -9 of the CLI). It is
 * stopped only while this process holds the data directory's lock, so it cannot belong to a live
 * Sluice, and only after checking that the pid in postmaster.pid really is a postgres of this
 * data directory (pids are reused).
 */
final class StaleServer {
    private static final Logger log = LoggerFactory.getLogger(StaleServer.class);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(60);

    /** The first lines of postmaster.pid: the postmaster's pid and port. */
    record PidFile(long pid, int port) {
    }

    private StaleServer() {
    }

    /** The parsed postmaster.pid of {@code dataDirectory}, if present and readable. */
    static Optional<PidFile> read(Path dataDirectory) {
        Path file = dataDirectory.resolve("postmaster.pid");
        try {
            if (!Files.exists(file)) {
                return Optional.empty();
            }
            List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            long pid = Long.parseLong(lines.get(0).strip());
            int port = lines.size() > 3 ? Integer.parseInt(lines.get(3).strip()) : 0;
            return Optional.of(new PidFile(pid, port));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /**
     * Stops a live postmaster of {@code dataDirectory}; the caller holds the directory's lock. A
     * postmaster.pid naming a process that is not a postgres of this directory is left to
     * PostgreSQL, which treats it as stale.
     */
    static void stopIfRunning(Path pgDir, Path dataDirectory) {
        Optional<PidFile> pidFile = read(dataDirectory);
        if (pidFile.isEmpty()) {
            return;
        }
        long pid = pidFile.get().pid();
        Optional<ProcessHandle> handle = ProcessHandle.of(pid);
        if (handle.isEmpty() || !handle.get().isAlive()) {
            return;
        }
        if (!isPostmasterOf(handle.get(), dataDirectory)) {
            throw new IllegalStateException("postmaster.pid in " + dataDirectory + " names process " + pid
                    + ", which is alive but not a PostgreSQL server of this data directory that Sluice can stop; "
                    + "stop it or remove postmaster.pid if it is not a server");
        }
        log.warn("embedded PostgreSQL in {}: stopping the server (pid {}, port {}) left running by a process that "
                + "ended without stopping it", dataDirectory, pid, pidFile.get().port());
        PgCommand.Result r = PgCommand.run(PostgresBinaries.command(pgDir, "pg_ctl",
                "stop", "-D", dataDirectory.toString(), "-m", "fast", "-w", "-t", Long.toString(STOP_TIMEOUT.toSeconds())),
                null, STOP_TIMEOUT.plusSeconds(10));
        if (!r.ok() && handle.get().isAlive()) {
            throw new IllegalStateException("could not stop the server (pid " + pid + ") left running in "
                    + dataDirectory + ": pg_ctl exit " + r.exitCode());
        }
    }

    /**
     * Whether the process is a postgres whose working directory is the data directory (the
     * postmaster changes into it). Where the platform does not show the working directory, the
     * program name must be postgres.
     */
    static boolean isPostmasterOf(ProcessHandle process, Path dataDirectory) {
        Optional<String> command = process.info().command();
        if (command.isPresent() && !Path.of(command.get()).getFileName().toString().startsWith("postgres")) {
            return false;
        }
        Path cwd = Path.of("/proc", Long.toString(process.pid()), "cwd");
        if (Files.exists(Path.of("/proc/self/cwd"))) {
            try {
                return cwd.toRealPath().equals(dataDirectory.toRealPath());
            } catch (IOException e) {
                return false;
            }
        }
        return command.isPresent();
    }
}
