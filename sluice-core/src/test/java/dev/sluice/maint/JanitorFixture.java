package dev.sluice.maint;

import dev.sluice.Sluice;
import dev.sluice.SweepResult;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.internal.catalog.StreamCatalog;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.maint.Janitor;
import dev.sluice.internal.maint.JanitorLimits;
import dev.sluice.internal.schema.Migrator;
import dev.sluice.internal.schema.SchemaSteps;
import dev.sluice.testing.ForwardingDataSource;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * A janitor on a test schema, statement counting, and SQL helpers for set-up and assertions. The janitor's
 * connections come from a small pool (a new connection per statement would make the tests slow; production code
 * runs on the application's pool); close the fixture after the class.
 */
final class JanitorFixture implements AutoCloseable {
    /** Small batches and rounds so tests see the bounds; a short lock timeout. */
    static final JanitorLimits SMALL = new JanitorLimits(1_000, 10, Duration.ofMinutes(1), Duration.ofMillis(300));

    final TestDatabase db;
    final String q;
    /** Statements the janitor's connections prepared or created. */
    final AtomicInteger statements = new AtomicInteger();
    private final Queue<Connection> idle = new ConcurrentLinkedQueue<>();
    private final DataSource counting;

    JanitorFixture(TestDatabase db) {
        this.db = db;
        this.q = "\"" + db.schema() + "\"";
        DataSource plain = db.dataSource();
        this.counting = new ForwardingDataSource(plain) {
            @Override
            public Connection getConnection() throws SQLException {
                Connection real = idle.poll();
                while (real != null && real.isClosed()) {
                    real = idle.poll();
                }
                return counted(real != null ? real : plain.getConnection());
            }
        };
    }

    /** A client without a maintenance manager of its own: the tests run the janitor themselves. */
    Sluice client() {
        return Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(false).build();
    }

    @Override
    public void close() {
        for (Connection c = idle.poll(); c != null; c = idle.poll()) {
            try {
                c.close();
            } catch (SQLException e) {
                // closing anyway
            }
        }
    }

    /** A fresh janitor (it remembers nothing) on the class's schema. */
    Janitor janitor(JanitorLimits limits) {
        Db jdb = new Db(counting);
        StreamCatalog streams = new StreamCatalog(jdb, db.schema(), new Migrator(db.schema(), "janitor-test", SchemaSteps.RELEASED),
                "janitor-test");
        return new Janitor(jdb, db.schema(), streams, limits);
    }

    Janitor janitor() {
        return janitor(SMALL);
    }

    static SweepResult result(List<SweepResult> pass, String name) {
        return pass.stream().filter(r -> r.name().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no sweep " + name + " in " + pass));
    }

    static long removed(List<SweepResult> pass, String name) {
        SweepResult r = result(pass, name);
        if (r.error() != null) {
            throw new AssertionError("sweep " + name + " failed: " + r.error());
        }
        return r.removed();
    }

    long scalar(String sql, Object... args) {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setObject(i + 1, args[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    List<String> strings(String sql, Object... args) {
        List<String> out = new ArrayList<>();
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setObject(i + 1, args[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(rs.getString(1));
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
        return out;
    }

    /** The log's partitions (unqualified names), in id order. */
    List<String> partitions(long streamId) {
        return strings("SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
                + " WHERE i.inhparent = to_regclass(?)"
                + " ORDER BY substring(c.relname FROM '_([0-9]+)$')::bigint", q + ".message_log_" + streamId);
    }

    String table(String name, long streamId) {
        return q + "." + name + "_" + streamId;
    }

    /** The connection with its statements counted; closing it gives it back to the pool (rolled back, auto-commit). */
    private Connection counted(Connection real) {
        java.util.concurrent.atomic.AtomicBoolean given = new java.util.concurrent.atomic.AtomicBoolean();
        return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, method, args) -> {
                    String m = method.getName();
                    if (m.equals("prepareStatement") || m.equals("createStatement") || m.equals("prepareCall")) {
                        statements.incrementAndGet();
                    }
                    if (m.equals("isClosed") && given.get()) {
                        return true;
                    }
                    if (m.equals("close")) {
                        if (given.compareAndSet(false, true) && !real.isClosed()) {
                            if (!real.getAutoCommit()) {
                                real.rollback();
                                real.setAutoCommit(true);
                            }
                            idle.offer(real);
                        }
                        return null;
                    }
                    try {
                        return method.invoke(real, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }
}
