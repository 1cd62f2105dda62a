package dev.sluice.embedded;

import java.nio.file.Path;
import java.util.Optional;

/**
 * How to reach an embedded server as its superuser: loopback port and password (a secret). The URL
 * forms carry the password; {@link #toString()} does not.
 *
 * @param port     the loopback TCP port
 * @param password the superuser's password (from the data directory's password file)
 */
public record EmbeddedConnection(int port, String password) {

    /**
     * The connection of the server running in {@code dataDirectory} (started by any process of the
     * current user), or empty when none runs there or its password file cannot be read.
     */
    public static Optional<EmbeddedConnection> running(Path dataDirectory) {
        Path dir = dataDirectory.toAbsolutePath().normalize();
        Optional<StaleServer.PidFile> pid = StaleServer.read(dir);
        if (pid.isEmpty() || pid.get().port() <= 0) {
            return Optional.empty();
        }
        boolean live = ProcessHandle.of(pid.get().pid()).map(h -> StaleServer.isPostmasterOf(h, dir)).orElse(false);
        String password = live ? ClusterAccess.storedPassword(dir) : null;
        return password == null ? Optional.empty() : Optional.of(new EmbeddedConnection(pid.get().port(), password));
    }

    /** The JDBC URL with user and password (a secret: never log or print it unasked). */
    public String jdbcUrl() {
        return "jdbc:postgresql://localhost:" + port + "/" + EmbeddedPostgresServer.DATABASE
                + "?user=" + EmbeddedPostgresServer.USER + "&password=" + password;
    }

    /** The libpq URI ({@code postgresql://user:password@localhost:port/db}, a secret) for psql and other clients. */
    public String uri() {
        return "postgresql://" + EmbeddedPostgresServer.USER + ":" + password + "@localhost:" + port + "/"
                + EmbeddedPostgresServer.DATABASE;
    }

    /** The libpq URI without the password, for a command line (pass the password as PGPASSWORD). */
    public String uriWithoutPassword() {
        return "postgresql://" + EmbeddedPostgresServer.USER + "@localhost:" + port + "/" + EmbeddedPostgresServer.DATABASE;
    }

    /** Names the port only: the password never reaches a log through this. */
    @Override
    public String toString() {
        return "EmbeddedConnection[port=" + port + ", password=(hidden)]";
    }
}
