package dev.sluice.embedded;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Objects;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An embedded PostgreSQL 17 server (binaries from Maven Central via zonky), started with durable
 * settings ({@code fsync=on}, {@code synchronous_commit=on}) and listening on loopback only.
 *
 * <p>Start it in a data directory that is reused across runs ({@link #start(Path)}) or in a
 * temporary one that is deleted on close ({@link #startTemporary()}). The server stops cleanly on
 * {@link #close()} and, as a safety net, on JVM exit.
 *
 * <pre>{@code
 * try (EmbeddedPostgresServer pg = EmbeddedPostgresServer.start(Path.of(".sluice"))) {
 *     DataSource ds = pg.dataSource();
 *     ...
 * }
 * }</pre>
 */
public final class EmbeddedPostgresServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(EmbeddedPostgresServer.class);

    /** The database the server is used through; zonky's initdb creates it. */
    public static final String DATABASE = "postgres";
    /** The superuser zonky's initdb creates (trust authentication, loopback only). */
    public static final String USER = "postgres";

    private final EmbeddedPostgres postgres;
    private final Path dataDirectory;
    private final boolean temporary;

    private EmbeddedPostgresServer(EmbeddedPostgres postgres, Path dataDirectory, boolean temporary) {
        this.postgres = postgres;
        this.dataDirectory = dataDirectory;
        this.temporary = temporary;
    }

    /**
     * Starts a server in {@code dataDirectory}, creating the cluster there on first use and reusing
     * it (and everything stored in it) on later runs.
     */
    public static EmbeddedPostgresServer start(Path dataDirectory) {
        Objects.requireNonNull(dataDirectory, "dataDirectory");
        Path dir = dataDirectory.toAbsolutePath().normalize();
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create data directory " + dir, e);
        }
        return start(dir, false, 0);
    }

    /**
     * Starts a server in {@code dataDirectory} on a fixed loopback {@code port}, so clients can
     * reconnect to the same URL after a restart (the reliability lab restarts PostgreSQL mid-run).
     */
    public static EmbeddedPostgresServer start(Path dataDirectory, int port) {
        Objects.requireNonNull(dataDirectory, "dataDirectory");
        Path dir = dataDirectory.toAbsolutePath().normalize();
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create data directory " + dir, e);
        }
        return start(dir, false, port);
    }

    /** Starts a server in a fresh temporary data directory that is deleted when the server stops. */
    public static EmbeddedPostgresServer startTemporary() {
        try {
            return start(Files.createTempDirectory("sluice-pg-"), true, 0);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a temporary data directory", e);
        }
    }

    private static EmbeddedPostgresServer start(Path dir, boolean temporary, int port) {
        try {
            EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder();
            if (port > 0) {
                builder.setPort(port);
            }
            EmbeddedPostgres pg = builder
                    .setDataDirectory(dir)
                    .setCleanDataDirectory(temporary)
                    // Durable: zonky passes -F (fsync off) and synchronous_commit=off by default;
                    // later -c settings win, so these restore the production defaults.
                    .setServerConfig("fsync", "on")
                    .setServerConfig("synchronous_commit", "on")
                    .setServerConfig("full_page_writes", "on")
                    .setServerConfig("listen_addresses", "localhost")
                    .setServerConfig("max_connections", "200")
                    .setLocaleConfig("locale", "C")
                    .setPGStartupWait(java.time.Duration.ofSeconds(60))
                    .start();
            EmbeddedPostgresServer server = new EmbeddedPostgresServer(pg, dir, temporary);
            log.info("embedded PostgreSQL started: dataDirectory={} port={} temporary={}", dir, pg.getPort(), temporary);
            return server;
        } catch (IOException e) {
            throw new UncheckedIOException("embedded PostgreSQL failed to start in " + dir
                    + " (is another process using this data directory?)", e);
        }
    }

    /** The TCP port the server listens on (loopback only). */
    public int port() {
        return postgres.getPort();
    }

    /** The data directory of this server. */
    public Path dataDirectory() {
        return dataDirectory;
    }

    /** Whether the data directory is deleted when the server stops. */
    public boolean temporary() {
        return temporary;
    }

    /** A JDBC URL for the server's {@value #DATABASE} database as user {@value #USER}. */
    public String jdbcUrl() {
        return "jdbc:postgresql://localhost:" + port() + "/" + DATABASE + "?user=" + USER;
    }

    /** A fresh non-pooling {@link DataSource} for this server. */
    public DataSource dataSource() {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(jdbcUrl());
        return ds;
    }

    /** Reads a server setting (for example {@code fsync}) from the running server. */
    public String setting(String name) {
        try (Connection c = dataSource().getConnection();
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT current_setting('" + name.replace("'", "''") + "')")) {
            rs.next();
            return rs.getString(1);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot read setting " + name, e);
        }
    }

    /** Stops the server (fast shutdown); idempotent. */
    @Override
    public void close() {
        try {
            postgres.close();
        } catch (IOException e) {
            throw new UncheckedIOException("embedded PostgreSQL did not stop cleanly", e);
        }
    }
}
