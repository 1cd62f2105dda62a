package dev.sluice.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who may connect to an embedded cluster: only the holder of a random password (scram-sha-256),
 * kept in {@value #PASSWORD_FILE} (mode 0600) inside the data directory (mode 0700), over loopback
 * TCP or a Unix socket inside the data directory. zonky's own initdb would trust everyone.
 */
final class ClusterAccess {
    /** The file in the data directory that holds the superuser's password. */
    static final String PASSWORD_FILE = "sluice-password";
    /** The server settings Sluice owns, included from postgresql.conf. */
    static final String SETTINGS_FILE = "sluice.conf";

    private static final Logger log = LoggerFactory.getLogger(ClusterAccess.class);
    private static final String INCLUDE_LINE = "include_if_exists = '" + SETTINGS_FILE + "'";
    private static final String PG_HBA = """
            # Written by Sluice at every start of the embedded server (docs/security.md).
            # Only the holder of the password in sluice-password may connect (scram-sha-256).
            # TYPE  DATABASE  USER  ADDRESS        METHOD
            local   all       all                  scram-sha-256
            host    all       all   127.0.0.1/32   scram-sha-256
            host    all       all   ::1/128        scram-sha-256
            """;
    private static final String SETTINGS = """
            # Written by Sluice at every start of the embedded server (docs/security.md).
            password_encryption = 'scram-sha-256'
            unix_socket_directories = '%s'
            unix_socket_permissions = 0700
            """;
    /** sun_path holds 108 bytes including the terminating NUL. */
    private static final int MAX_SOCKET_PATH = 107;
    private static final Duration TOOL_TIMEOUT = Duration.ofMinutes(2);

    private ClusterAccess() {
    }

    /** The password stored in the data directory, or null when the cluster has none (new or legacy). */
    static String storedPassword(Path dataDirectory) {
        Path file = dataDirectory.resolve(PASSWORD_FILE);
        if (!Files.exists(file)) {
            return null;
        }
        try {
            String pw = Files.readString(file, StandardCharsets.UTF_8).strip();
            return pw.isEmpty() ? null : pw;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }

    /** A fresh random password: 32 URL-safe characters, so it needs no escaping in a URL. */
    static String newPassword() {
        byte[] bytes = new byte[24];
        new SecureRandom().nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    /** Creates a cluster in the empty {@code dataDirectory} whose superuser needs {@code password}. */
    static void initdb(Path pgDir, Path dataDirectory, String password) {
        Path pwfile = null;
        try {
            // initdb wants an empty data directory, so the password travels in a 0600 file in the
            // private cache directory (prepared with the binaries).
            Path dir = PostgresBinaries.cacheRoot();
            pwfile = FilePermissions.posix(dir.getFileSystem())
                    ? Files.createTempFile(dir, ".sluice-initdb-", ".tmp",
                            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))
                    : Files.createTempFile(dir, ".sluice-initdb-", ".tmp");
            Files.writeString(pwfile, password + "\n", StandardCharsets.UTF_8);
            PgCommand.Result r = PgCommand.run(PostgresBinaries.command(pgDir, "initdb",
                    "-A", "scram-sha-256", "--pwfile=" + pwfile, "-U", EmbeddedPostgresServer.USER,
                    "-D", dataDirectory.toString(), "-E", "UTF-8", "--locale=C"), null, TOOL_TIMEOUT);
            if (!r.ok()) {
                throw new IllegalStateException("initdb failed in " + dataDirectory + " (exit " + r.exitCode() + "): "
                        + tail(r.output()));
            }
            FilePermissions.writePrivate(dataDirectory.resolve(PASSWORD_FILE), password + "\n");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the cluster in " + dataDirectory, e);
        } finally {
            if (pwfile != null) {
                try {
                    Files.deleteIfExists(pwfile);
                } catch (IOException ignored) {
                    // A leftover 0600 file in the private cache directory reveals nothing to other users.
                }
            }
        }
    }

    /**
     * Gives a cluster created by an older Sluice (trust, no password) a password, in single-user
     * mode while no server runs, so no trust window ever opens to other users.
     */
    static void upgradeLegacy(Path pgDir, Path dataDirectory, String password) {
        log.info("embedded PostgreSQL in {} has no password yet (created by an older Sluice): setting one", dataDirectory);
        PgCommand.Result r = PgCommand.run(PostgresBinaries.command(pgDir, "postgres", "--single",
                        "-D", dataDirectory.toString(), "-c", "password_encryption=scram-sha-256", "postgres"),
                "ALTER ROLE " + EmbeddedPostgresServer.USER + " PASSWORD '" + password + "';\n", TOOL_TIMEOUT);
        if (!r.ok() || r.output().contains("ERROR")) {
            // The output may echo the statement: show only that it failed and how.
            throw new IllegalStateException("could not set a password on the embedded cluster in " + dataDirectory
                    + " (single-user mode exit " + r.exitCode() + ")");
        }
        try {
            FilePermissions.writePrivate(dataDirectory.resolve(PASSWORD_FILE), password + "\n");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + dataDirectory.resolve(PASSWORD_FILE), e);
        }
    }

    /**
     * Rewrites pg_hba.conf (password only) and the settings file (Unix socket inside the data
     * directory, 0700), and makes postgresql.conf include the latter. Runs while no server runs.
     */
    static void writeAccessFiles(Path dataDirectory) {
        try {
            FilePermissions.writePrivate(dataDirectory.resolve("pg_hba.conf"), PG_HBA);
            Path socketDir = socketDirectory(dataDirectory);
            String dirs = socketDir == null ? "" : "\"" + socketDir.toString().replace("\"", "\"\"").replace("'", "''") + "\"";
            FilePermissions.writePrivate(dataDirectory.resolve(SETTINGS_FILE), SETTINGS.formatted(dirs));
            Path conf = dataDirectory.resolve("postgresql.conf");
            String text = Files.readString(conf, StandardCharsets.UTF_8);
            if (!text.contains(INCLUDE_LINE)) {
                FilePermissions.writePrivate(conf, text + (text.endsWith("\n") ? "" : "\n")
                        + "# Sluice's settings (socket, password encryption); keep this line last.\n" + INCLUDE_LINE + "\n");
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the access settings of " + dataDirectory, e);
        }
    }

    /** The Unix socket directory (the data directory), or null when its path is too long for a socket. */
    static Path socketDirectory(Path dataDirectory) {
        if (PostgresBinaries.isWindows()) {
            return null;
        }
        // The socket is <dir>/.s.PGSQL.<port>; assume a five-digit port.
        int length = dataDirectory.toString().getBytes(StandardCharsets.UTF_8).length + "/.s.PGSQL.65535".length();
        if (length > MAX_SOCKET_PATH) {
            log.info("embedded PostgreSQL in {}: the path is too long for a Unix socket ({} > {} bytes); TCP on loopback only",
                    dataDirectory, length, MAX_SOCKET_PATH);
            return null;
        }
        return dataDirectory;
    }

    private static String tail(String output) {
        String s = output.strip();
        return s.length() <= 500 ? s : "..." + s.substring(s.length() - 500);
    }
}
