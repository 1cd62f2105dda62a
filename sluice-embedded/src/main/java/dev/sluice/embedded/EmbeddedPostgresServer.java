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
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An embedded PostgreSQL 17 server (binaries from Maven Central via zonky), started with durable
 * settings ({@code fsync=on}, {@code synchronous_commit=on}) and listening on loopback only.
 *
 * <p>Only the current user gets in: the cluster's superuser {@value #USER} has a random password
 * (scram-sha-256) created with the cluster and kept in {@code sluice-password} (mode
 * 0600) in the data directory (mode 0700); pg_hba.conf has no trust line; the Unix socket lives in
 * the data directory with mode 0700; the binaries are extracted into a cache directory only the
 * current user can write. A cluster created by an older Sluice (trust, no password) gets a password
 * on its first start. A server left running by a process that was killed is stopped on the next
 * start in the same data directory.
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
 *
 * <p>{@link #jdbcUrl()}, {@link #uri()} and {@link #password()} carry the password: they are secrets,
 * never log or print them.
 */
public final class EmbeddedPostgresServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(EmbeddedPostgresServer.class);

    /** The database the server is used through; initdb creates it. */
    public static final String DATABASE = "postgres";
    /** The superuser initdb creates (password authentication, loopback and the private socket only). */
    public static final String USER = "postgres";
    /** zonky reads its scratch directory from this property when a builder is made. */
    private static final String ZONKY_WORKING_DIR = "ot.epg.working-dir";

    private final EmbeddedPostgres postgres;
    private final Path dataDirectory;
    private final boolean temporary;
    private final String password;
    private final Path socketDirectory;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Thread shutdownHook;

    private EmbeddedPostgresServer(EmbeddedPostgres postgres, Path dataDirectory, boolean temporary, String password,
                                   Path socketDirectory) {
        this.postgres = postgres;
        this.dataDirectory = dataDirectory;
        this.temporary = temporary;
        this.password = password;
        this.socketDirectory = socketDirectory;
        this.shutdownHook = new Thread(this::stop, "sluice-embedded-postgres-stop");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /**
     * Starts a server in {@code dataDirectory}, creating the cluster there on first use and reusing
     * it (and everything stored in it) on later runs.
     */
    public static EmbeddedPostgresServer start(Path dataDirectory) {
        return start(dataDirectory, 0);
    }

    /**
     * Starts a server in {@code dataDirectory} on a fixed loopback {@code port}, so clients can
     * reconnect to the same URL after a restart (the reliability lab restarts PostgreSQL mid-run);
     * {@code 0} picks a free port.
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
        Path dir;
        try {
            dir = Files.createTempDirectory("sluice-pg-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a temporary data directory", e);
        }
        try {
            return start(dir, true, 0);
        } catch (RuntimeException e) {
            PostgresBinaries.deleteTree(dir);
            throw e;
        }
    }

    private static EmbeddedPostgresServer start(Path dir, boolean temporary, int port) {
        Path pgDir = PostgresBinaries.prepare();
        useScratchWorkingDirectory();
        String stored = ClusterAccess.storedPassword(dir);
        boolean fresh = !Files.exists(dir.resolve("postgresql.conf"));
        String password = stored != null && !fresh ? stored : ClusterAccess.newPassword();
        if (fresh) {
            ClusterAccess.initdb(pgDir, dir, password);
        }
        boolean legacy = !fresh && stored == null;
        try {
            EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder();
            if (port > 0) {
                builder.setPort(port);
            }
            EmbeddedPostgres pg = builder
                    .setOverrideWorkingDirectory(PostgresBinaries.cacheRoot().toFile())
                    .setDataDirectory(dir)
                    // Never clean: zonky's clean start runs initdb with trust authentication.
                    .setCleanDataDirectory(false)
                    .setRegisterShutdownHook(false)
                    // Runs after zonky took the data directory's lock, before the server starts.
                    .setDataDirectoryCustomizer(d -> {
                        StaleServer.stopIfRunning(pgDir, dir);
                        if (legacy) {
                            ClusterAccess.upgradeLegacy(pgDir, dir, password);
                        }
                        ClusterAccess.writeAccessFiles(dir);
                    })
                    .setConnectConfig("password", password)
                    // Durable: zonky passes -F (fsync off) and synchronous_commit=off by default;
                    // later -c settings win, so these restore the production defaults.
                    .setServerConfig("fsync", "on")
                    .setServerConfig("synchronous_commit", "on")
                    .setServerConfig("full_page_writes", "on")
                    .setServerConfig("listen_addresses", "localhost")
                    .setServerConfig("max_connections", "200")
                    // Two-phase commit available, as XA transaction managers need (Sluice's fence is
                    // tested against prepared transactions, docs/fence.md).
                    .setServerConfig("max_prepared_transactions", "16")
                    .setLocaleConfig("locale", "C")
                    .setPGStartupWait(java.time.Duration.ofSeconds(60))
                    .start();
            // zonky marks its working directory writable for all after finding the binaries: undo that.
            PostgresBinaries.privateDirectory(PostgresBinaries.cacheRoot());
            EmbeddedPostgresServer server = new EmbeddedPostgresServer(pg, dir, temporary, password,
                    ClusterAccess.socketDirectory(dir));
            log.info("embedded PostgreSQL started: dataDirectory={} port={} temporary={}", dir, pg.getPort(), temporary);
            return server;
        } catch (IOException e) {
            throw new UncheckedIOException("embedded PostgreSQL failed to start in " + dir + inUseBy(dir), e);
        } catch (IllegalStateException e) {
            if (String.valueOf(e.getMessage()).startsWith("could not lock")) {
                throw new IllegalStateException("embedded PostgreSQL data directory " + dir
                        + " is in use by another running process" + inUseBy(dir), e);
            }
            throw e;
        }
    }

    /** Names the server of postmaster.pid, for messages about a busy data directory. */
    private static String inUseBy(Path dir) {
        return StaleServer.read(dir).map(p -> " (its server: pid " + p.pid() + ", port " + p.port() + ")").orElse("");
    }

    /**
     * zonky's builder scans its working directory (by default a shared directory under the system
     * temporary directory) for "old data directories" to stop and delete; point it at a private
     * empty directory, unless the user chose one.
     */
    private static synchronized void useScratchWorkingDirectory() {
        if (System.getProperty(ZONKY_WORKING_DIR) == null) {
            Path scratch = PostgresBinaries.cacheRoot().resolve("scratch");
            PostgresBinaries.privateDirectory(scratch);
            System.setProperty(ZONKY_WORKING_DIR, scratch.toString());
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

    /**
     * A JDBC URL for the server's {@value #DATABASE} database as user {@value #USER}, with the password:
     * a secret, never log or print it.
     */
    public String jdbcUrl() {
        return connection().jdbcUrl();
    }

    /**
     * The same connection as a libpq URI ({@code postgresql://...}) for psql and other clients, with
     * the password: a secret, never log or print it.
     */
    public String uri() {
        return connection().uri();
    }

    /** Port and password of this server, with the URL forms. */
    public EmbeddedConnection connection() {
        return new EmbeddedConnection(port(), password);
    }

    /** The superuser's password (a secret; the same as in {@link #passwordFile()}). */
    public String password() {
        return password;
    }

    /** The file (mode 0600, in the data directory) that holds the password. */
    public Path passwordFile() {
        return dataDirectory.resolve(ClusterAccess.PASSWORD_FILE);
    }

    /** The directory of the server's Unix socket (the data directory), if the path was short enough for one. */
    public Optional<Path> socketDirectory() {
        return Optional.ofNullable(socketDirectory);
    }

    /** A fresh non-pooling {@link DataSource} for this server (it carries the password). */
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

    /**
     * Removes the JVM shutdown hook that stops the server at exit, for an owner that stops it itself, in order, from
     * a hook of its own: a Spring context closes its clients (draining consumers, which still need the database) and
     * only then this server, whereas this hook would run at the same time as the context's and stop the database
     * under it. The owner must then {@link #close()} it; a server left running when the JVM exits is found stale and
     * stopped by the next start in the same directory. Idempotent.
     *
     * @return this server
     */
    public EmbeddedPostgresServer detachShutdownHook() {
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException shuttingDown) {
            // The JVM is exiting already: the hook runs (or ran) as it would have.
        }
        return this;
    }

    /** Stops the server (fast shutdown) and deletes a temporary data directory; idempotent. */
    @Override
    public void close() {
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException shuttingDown) {
            // The JVM is exiting: the hook stops the server.
        }
        stop();
    }

    private void stop() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            postgres.close();
        } catch (IOException e) {
            throw new UncheckedIOException("embedded PostgreSQL did not stop cleanly", e);
        } finally {
            if (temporary) {
                PostgresBinaries.deleteTree(dataDirectory);
            }
        }
    }
}
