package dev.sluice.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.Serde;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Small helpers of every scenario: the data source, schema name, environment and pool that
 * {@link ScenarioRunner} sets up, SQL helpers, quantiles and medians. Every scenario measures under
 * the same rules.
 */
final class Bench {
    /** The content type Sluice stores for {@code byte[]} payloads; references write the same. */
    static final String CONTENT_TYPE = Serde.bytes().contentType();
    /** The schema version Sluice stores for an unannotated payload type; references write the same. */
    static final int SCHEMA_VERSION = 1;
    /**
     * The columns, types and defaults of {@code message_log_<id>}, for the unpartitioned tables the
     * references write and read (the plain-table floor).
     */
    static final String LOG_COLUMNS = "id bigserial PRIMARY KEY, created_at timestamptz NOT NULL DEFAULT now(), "
            + "schema_version int NOT NULL DEFAULT 1, content_type text, routing_key text, message_key text, "
            + "compaction_rank bigint, headers jsonb, options jsonb, payload bytea NOT NULL";

    private Bench() {
    }

    /** A non-pooling data source for the URL; references and the admin connection use it. */
    static PGSimpleDataSource dataSource(String url) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(url);
        return ds;
    }

    /** A fresh schema name {@code bench_<random>}: nothing a benchmark creates can collide with the user's. */
    static String schemaName() {
        return "bench_" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 1);
    }

    /** The environment line of every result. */
    static ProduceBenchmark.Environment environment(Connection admin, boolean embedded, String schema) throws SQLException {
        return new ProduceBenchmark.Environment(serverVersion(admin), Runtime.getRuntime().availableProcessors(),
                embedded, schema);
    }

    /**
     * The pool Sluice runs on (HikariCP, as its docs recommend): without one every transaction would open
     * a connection, which measures the DataSource, not Sluice. All connections are opened up front.
     */
    static HikariDataSource pool(DataSource ds, int size, String name) {
        HikariConfig c = new HikariConfig();
        c.setDataSource(ds);
        c.setPoolName(name);
        c.setMaximumPoolSize(size);
        c.setMinimumIdle(size);
        c.setTransactionIsolation("TRANSACTION_READ_COMMITTED"); // named, not detected: see LabWorker.poolConfig
        return new HikariDataSource(c);
    }

    static byte[] randomBytes(int n) {
        byte[] b = new byte[n];
        ThreadLocalRandom.current().nextBytes(b);
        return b;
    }

    static String quote(String identifier) {
        return '"' + identifier.replace("\"", "\"\"") + '"';
    }

    static long queryLong(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    static void execute(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    static String serverVersion(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SHOW server_version")) {
            rs.next();
            return rs.getString(1);
        }
    }

    /**
     * Flushes dirty buffers before a phase so that neither side pays for the other's checkpoint. Needs
     * superuser or pg_checkpoint; on a server that refuses, the phases run without it.
     */
    static void checkpoint(Connection c) {
        try (Statement s = c.createStatement()) {
            s.execute("CHECKPOINT");
        } catch (SQLException e) {
            // Not allowed for this role: measure anyway (documented in docs/benchmarks.md).
        }
    }

    static void dropSchema(Connection c, String schema) {
        try (Statement s = c.createStatement()) {
            s.execute("DROP SCHEMA IF EXISTS " + quote(schema) + " CASCADE");
        } catch (SQLException e) {
            throw new BenchmarkException("could not drop the benchmark schema " + schema + ": " + e.getMessage(), e);
        }
    }

    /** Drops the schema after a failure, keeping the failure as the one reported. */
    static void dropSchemaAfter(Throwable failure, Connection c, String schema) {
        try {
            dropSchema(c, schema);
        } catch (RuntimeException cleanup) {
            failure.addSuppressed(cleanup);
        }
    }

    /** The {@code q}-quantile (0..1) of sorted values by nearest rank; NaN for none. */
    static double quantile(double[] sorted, double q) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int rank = (int) Math.ceil(q * sorted.length);
        return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
    }

    /** The median of per-run figures picked by {@code f}. */
    static <R> double median(List<R> runs, java.util.function.ToDoubleFunction<R> f) {
        return BenchJson.median(runs.stream().map(r -> f.applyAsDouble(r)).toList());
    }

    /** Runs {@code n} threads of {@code body} and waits for them; the first failure is rethrown. */
    static void runThreads(int n, String name, Phase.Worker body) {
        List<Thread> threads = new ArrayList<>(n);
        java.util.concurrent.atomic.AtomicReference<Throwable> failure = new java.util.concurrent.atomic.AtomicReference<>();
        for (int i = 0; i < n; i++) {
            int index = i;
            Thread t = new Thread(() -> {
                try {
                    body.run(index);
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, name + i);
            t.setDaemon(true);
            threads.add(t);
        }
        threads.forEach(Thread::start);
        for (Thread t : threads) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new BenchmarkException("interrupted", e);
            }
        }
        Throwable f = failure.get();
        if (f != null) {
            throw new BenchmarkException("a thread of the benchmark failed: " + f, f);
        }
    }
}
