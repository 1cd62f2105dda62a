package dev.sluice.embedded.test;

import dev.sluice.embedded.EmbeddedPostgresServer;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * The extension behind {@link SluiceTest}: starts one embedded server per test JVM (unless
 * {@code SLUICE_TEST_DATABASE_URL} names a server), creates a fresh schema before each test class and
 * drops it (and any extra schemas the class reserved) after the class.
 */
public final class SluiceTestExtension implements BeforeAllCallback, AfterAllCallback, ParameterResolver {
    /** Environment variable naming an external PostgreSQL (a JDBC URL) to run the tests against. */
    public static final String DATABASE_URL_ENV = "SLUICE_TEST_DATABASE_URL";

    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(SluiceTestExtension.class);
    private static final Map<String, Set<String>> EXTRA_SCHEMAS = new ConcurrentHashMap<>();
    private static volatile EmbeddedPostgresServer server;

    /**
     * The JDBC URL of the server every test of this JVM uses, starting the embedded one if needed; it
     * carries the embedded server's password.
     */
    public static synchronized String serverUrl() {
        String external = System.getenv(DATABASE_URL_ENV);
        if (external != null && !external.isBlank()) {
            return external.trim();
        }
        if (server == null) {
            EmbeddedPostgresServer started = EmbeddedPostgresServer.startTemporary();
            // Stopped (and its directory deleted) by the server's shutdown hook at JVM exit; one server
            // serves every test class.
            cheapenLogins(started);
            server = started;
        }
        return server.jdbcUrl();
    }

    /**
     * Re-hashes the test server's password with one SCRAM iteration instead of 4096, so each login costs
     * the client no PBKDF2 (about 2 ms of CPU per connection; the CLI and child processes under test open
     * their own connections, thousands in a suite). Only this throw-away test cluster: authentication is
     * still scram-sha-256 with the same random 192-bit password over loopback and the private socket, which
     * no offline guessing can reach whatever the iteration count. {@code EmbeddedPostgresServer} itself,
     * which users get, keeps PostgreSQL's 4096 (docs/security.md, docs/testing.md).
     */
    private static void cheapenLogins(EmbeddedPostgresServer pg) {
        try (Connection c = java.sql.DriverManager.getConnection(pg.jdbcUrl()); Statement s = c.createStatement()) {
            s.execute("SET scram_iterations = 1");
            s.execute("ALTER ROLE \"" + EmbeddedPostgresServer.USER + "\" PASSWORD '" + pg.password().replace("'", "''") + "'");
        } catch (SQLException e) {
            throw new IllegalStateException("test kit: cannot set the test server's password", e);
        }
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        String url = serverUrl();
        String schema = schemaName(context.getRequiredTestClass().getSimpleName());
        execute(url, "CREATE SCHEMA \"" + schema + "\"");
        String env = System.getenv(DATABASE_URL_ENV);
        TestDatabase db = new TestDatabase(url, schema, env != null && !env.isBlank());
        context.getStore(NS).put(TestDatabase.class, db);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        TestDatabase db = context.getStore(NS).remove(TestDatabase.class, TestDatabase.class);
        if (db == null) {
            return;
        }
        Set<String> extra = EXTRA_SCHEMAS.remove(db.schema());
        if (extra != null) {
            for (String s : extra) {
                execute(db.jdbcUrl(), "DROP SCHEMA IF EXISTS \"" + s + "\" CASCADE");
            }
        }
        execute(db.jdbcUrl(), "DROP SCHEMA IF EXISTS \"" + db.schema() + "\" CASCADE");
    }

    @Override
    public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return parameterContext.getParameter().getType() == TestDatabase.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        TestDatabase db = extensionContext.getStore(NS).get(TestDatabase.class, TestDatabase.class);
        if (db == null) {
            throw new ParameterResolutionException("no test database: is the class annotated with @SluiceTest?");
        }
        return db;
    }

    static String reserveExtraSchema(TestDatabase db, String hint) {
        String name = schemaName(hint);
        EXTRA_SCHEMAS.computeIfAbsent(db.schema(), k -> ConcurrentHashMap.newKeySet()).add(name);
        return name;
    }

    private static String schemaName(String hint) {
        String base = hint.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]", "_");
        if (base.length() > 40) {
            base = base.substring(0, 40);
        }
        String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 8);
        return "t_" + base + "_" + suffix;
    }

    private static void execute(String url, String sql) {
        try (Connection c = KitPool.forUrl(url).getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException("test kit SQL failed: " + sql, e);
        }
    }
}
