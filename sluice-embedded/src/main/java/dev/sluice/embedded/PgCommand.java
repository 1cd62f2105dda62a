package dev.sluice.embedded;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs one PostgreSQL program to completion with a timeout, capturing (bounded) output. */
final class PgCommand {
    private static final int MAX_OUTPUT = 16 * 1024;

    /** What the program did: its exit code and the start of its combined output. */
    record Result(int exitCode, String output) {
        boolean ok() {
            return exitCode == 0;
        }
    }

    private PgCommand() {
    }

    /**
     * Runs {@code command}, writing {@code stdin} (may be null) to it, and waits at most {@code timeout}.
     * The output is never logged: single-user mode may echo what it was given.
     */
    static Result run(List<String> command, String stdin, Duration timeout) {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        // Never let a caller's PG* variables steer the embedded tools (PGPASSWORD, PGDATA, ...).
        pb.environment().keySet().removeIf(k -> k.startsWith("PG"));
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + programName(command), e);
        }
        try {
            try (OutputStream in = p.getOutputStream()) {
                if (stdin != null) {
                    in.write(stdin.getBytes(StandardCharsets.UTF_8));
                }
            }
            StringBuilder out = new StringBuilder();
            Thread reader = new Thread(() -> drain(p.getInputStream(), out), "pg-command-output");
            reader.setDaemon(true);
            reader.start();
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(programName(command) + " did not finish within " + timeout);
            }
            reader.join(TimeUnit.SECONDS.toMillis(5));
            synchronized (out) {
                return new Result(p.exitValue(), out.toString());
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot talk to " + programName(command), e);
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + programName(command), e);
        }
    }

    private static void drain(InputStream in, StringBuilder out) {
        byte[] buf = new byte[4096];
        try (in) {
            int n;
            while ((n = in.read(buf)) >= 0) {
                synchronized (out) {
                    if (out.length() < MAX_OUTPUT) {
                        out.append(new String(buf, 0, Math.min(n, MAX_OUTPUT - out.length()), StandardCharsets.UTF_8));
                    }
                }
            }
        } catch (IOException e) {
            // The process ended; what was read is enough for a message.
        }
    }

    private static String programName(List<String> command) {
        for (String part : command) {
            if (part.contains("/bin/") || part.contains("\\bin\\")) {
                return Path.of(part).getFileName().toString();
            }
        }
        return command.get(0);
    }
}
