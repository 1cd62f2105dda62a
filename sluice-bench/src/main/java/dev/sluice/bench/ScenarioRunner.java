package dev.sluice.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.Sluice;
import dev.sluice.embedded.EmbeddedPostgresServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import javax.sql.DataSource;

/**
 * The plumbing every scenario shares, so that each benchmark keeps only what it measures: where it runs
 * (the given server, or a temporary embedded PostgreSQL started for it and stopped afterwards), a fresh
 * schema {@code bench_<random>} dropped at the end (also after a failure, keeping the failure as the one
 * reported), the environment line, the pool and the {@link Sluice} the scenario measures, and the loop
 * over K runs that reports each finished run.
 */
final class ScenarioRunner {
    /** The pool's name and Sluice's client id of every scenario. */
    static final String NAME = "sluice-bench";

    private ScenarioRunner() {
    }

    /** What a scenario measures, given the {@link Context} the runner prepared. */
    @FunctionalInterface
    interface Scenario<R> {
        /** The measurement; the runner closes Sluice and the pool after it and drops the schema. */
        R measure(Context context) throws SQLException;
    }

    /**
     * How a scenario is set up.
     *
     * @param databaseUrl  JDBC URL of the server to measure; {@code null} starts a temporary one
     * @param what         names the benchmark in the message of a database error ("the produce benchmark")
     * @param poolSize     connections of the pool Sluice runs on; all are opened up front
     * @param allowDestroy whether the scenario's Sluice may destroy streams (to free space between runs)
     * @param starter      starts the temporary server when there is no URL
     * @param client       settings of the scenario's client beyond the runner's own (the identity for most)
     */
    record Setup(String databaseUrl, String what, int poolSize, boolean allowDestroy, ServerStarter starter,
                 UnaryOperator<Sluice.Builder> client) {
        Setup {
            Objects.requireNonNull(what, "what");
            Objects.requireNonNull(starter, "starter");
            Objects.requireNonNull(client, "client");
        }

        /** On {@code databaseUrl} or a temporary embedded PostgreSQL, streams destroyable. */
        static Setup of(String databaseUrl, String what, int poolSize) {
            return new Setup(databaseUrl, what, poolSize, true, EMBEDDED, UnaryOperator.identity());
        }

        /** The same without {@code allowDestroy}. */
        Setup keepingStreams() {
            return new Setup(databaseUrl, what, poolSize, false, starter, client);
        }

        /** The same with another temporary server. */
        Setup startingWith(ServerStarter s) {
            return new Setup(databaseUrl, what, poolSize, allowDestroy, s, client);
        }

        /** The same with {@code settings} applied to the client's builder after the runner's own. */
        Setup withClient(UnaryOperator<Sluice.Builder> settings) {
            return new Setup(databaseUrl, what, poolSize, allowDestroy, starter, settings);
        }
    }

    /** A temporary server for a scenario without a database URL. */
    interface TemporaryServer extends AutoCloseable {
        String jdbcUrl();

        @Override
        void close() throws IOException;
    }

    /** Starts a {@link TemporaryServer}. */
    interface ServerStarter {
        TemporaryServer start() throws IOException;
    }

    /** A temporary embedded PostgreSQL with the durable settings of {@link EmbeddedPostgresServer}. */
    static final ServerStarter EMBEDDED = () -> {
        EmbeddedPostgresServer server = EmbeddedPostgresServer.startTemporary();
        return new TemporaryServer() {
            @Override
            public String jdbcUrl() {
                return server.jdbcUrl();
            }

            @Override
            public void close() {
                server.close();
            }
        };
    };

    /** One run of a scenario. */
    interface Run<T> {
        T run(int run) throws SQLException;
    }

    /**
     * Where a scenario runs, valid while {@link Scenario#measure} runs.
     *
     * @param url         the JDBC URL of the server
     * @param dataSource  a non-pooling data source for it (references and {@code admin} use it)
     * @param admin       an auto-commit connection for setup, checkpoints and counts
     * @param schema      the scenario's schema (dropped at the end)
     * @param environment the environment line of the result
     * @param listener    progress callbacks
     * @param sluice      Sluice on the scenario's pool, in {@code schema}
     */
    record Context(String url, DataSource dataSource, Connection admin, String schema,
                   ProduceBenchmark.Environment environment, ScenarioListener listener, Sluice sluice) {

        /**
         * Runs {@code count} runs (numbered from 1) one after the other and hands each to {@code finished}
         * as it completes.
         */
        <T> List<T> runs(int count, Run<T> run, Consumer<? super T> finished) throws SQLException {
            List<T> runs = new ArrayList<>(count);
            for (int i = 1; i <= count; i++) {
                T r = run.run(i);
                runs.add(r);
                finished.accept(r);
            }
            return runs;
        }
    }

    /**
     * Runs {@code scenario} as {@code setup} says: on its server or a temporary one, in a fresh schema that
     * is dropped afterwards, with Sluice on a pool of its own.
     */
    static <R> R run(Setup setup, ScenarioListener listener, Scenario<R> scenario) {
        Objects.requireNonNull(setup, "setup");
        Objects.requireNonNull(listener, "listener");
        try {
            if (setup.databaseUrl() != null) {
                return runOn(setup.databaseUrl(), false, setup, listener, scenario);
            }
            try (TemporaryServer server = setup.starter().start()) {
                return runOn(server.jdbcUrl(), true, setup, listener, scenario);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("the embedded PostgreSQL failed", e);
        } catch (SQLException e) {
            throw new BenchmarkException("database error during " + setup.what() + ": " + e.getMessage(), e);
        }
    }

    private static <R> R runOn(String url, boolean embedded, Setup setup, ScenarioListener listener,
                               Scenario<R> scenario)
            throws SQLException {
        // Sluice's pool and the references open connections through the same driver with the same URL.
        DataSource ds = Bench.dataSource(url);
        String schema = Bench.schemaName();
        try (Connection admin = ds.getConnection()) {
            admin.setAutoCommit(true);
            ProduceBenchmark.Environment env = Bench.environment(admin, embedded, schema);
            listener.started(env);
            R result;
            try {
                // Sluice runs on a pool, as its docs recommend for anything but one-off tools: without one
                // every transaction would open a connection, which measures the DataSource, not Sluice.
                try (HikariDataSource pool = Bench.pool(ds, setup.poolSize(), NAME);
                     Sluice sluice = setup.client().apply(Sluice.builder().dataSource(pool).schema(schema)
                             .allowDestroy(setup.allowDestroy()).clientId(NAME)).build()) {
                    result = scenario.measure(new Context(url, ds, admin, schema, env, listener, sluice));
                }
            } catch (Throwable e) {
                // Leave nothing behind on the user's database; the first failure is the one reported.
                Bench.dropSchemaAfter(e, admin, schema);
                throw e;
            }
            Bench.dropSchema(admin, schema);
            return result;
        }
    }
}
