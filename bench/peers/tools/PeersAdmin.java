import dev.sluice.embedded.EmbeddedPostgresServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.CountDownLatch;

/**
 * Small chores of bench/peers/run.sh that need a PostgreSQL client (psql may be absent), as a
 * single-file program over the sluice jar ({@code java -cp sluice.jar PeersAdmin.java COMMAND ...}):
 *
 * <ul>
 *   <li>{@code info JDBC_URL}: the server's version and the settings that decide the numbers;</li>
 *   <li>{@code ensure-database JDBC_URL NAME}: creates database NAME (through the given URL's database) if missing;</li>
 *   <li>{@code clean JDBC_URL SCHEMA...}: drops the schemas (CASCADE) so every system starts from nothing;</li>
 *   <li>{@code embedded}: starts Sluice's embedded PostgreSQL (temporary, durable settings) and prints
 *       {@code URL postgresql://user:password@…} once it is up (a secret); runs until killed.</li>
 * </ul>
 */
public final class PeersAdmin {
    private static final String[] SETTINGS = {"fsync", "synchronous_commit", "full_page_writes", "wal_level",
            "shared_buffers", "max_wal_size", "checkpoint_timeout", "max_connections", "wal_sync_method"};

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            throw new IllegalArgumentException("usage: PeersAdmin.java info|ensure-database|clean|embedded ...");
        }
        switch (args[0]) {
            case "info" -> info(args[1]);
            case "ensure-database" -> ensureDatabase(args[1], args[2]);
            case "clean" -> {
                try (Connection c = DriverManager.getConnection(args[1]); Statement s = c.createStatement()) {
                    for (int i = 2; i < args.length; i++) {
                        if (!args[i].matches("[a-z_][a-z0-9_]*")) {
                            throw new IllegalArgumentException("not a plain schema name: " + args[i]);
                        }
                        s.execute("DROP SCHEMA IF EXISTS " + args[i] + " CASCADE");
                    }
                }
            }
            case "embedded" -> embedded();
            default -> throw new IllegalArgumentException("unknown command " + args[0]);
        }
    }

    static void info(String url) throws SQLException {
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            try (ResultSet rs = s.executeQuery("SELECT version()")) {
                rs.next();
                System.out.println("server: " + rs.getString(1));
            }
            StringBuilder b = new StringBuilder("settings:");
            for (String name : SETTINGS) {
                try (ResultSet rs = s.executeQuery("SELECT current_setting('" + name + "')")) {
                    rs.next();
                    b.append(' ').append(name).append('=').append(rs.getString(1));
                }
            }
            System.out.println(b);
        }
    }

    static void ensureDatabase(String url, String name) throws SQLException {
        if (!name.matches("[a-z_][a-z0-9_]*")) {
            throw new IllegalArgumentException("not a plain database name: " + name);
        }
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            try (ResultSet rs = s.executeQuery("SELECT 1 FROM pg_database WHERE datname = '" + name + "'")) {
                if (rs.next()) {
                    return;
                }
            }
            s.execute("CREATE DATABASE " + name);
        }
    }

    static void embedded() throws InterruptedException {
        EmbeddedPostgresServer server = EmbeddedPostgresServer.startTemporary();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            stopped.countDown();
        }));
        // The URI carries the server's password (docs/security.md): run.sh reads it from a 0600 file and deletes it.
        System.out.println("URL " + server.uri());
        System.out.flush();
        stopped.await();
    }
}
