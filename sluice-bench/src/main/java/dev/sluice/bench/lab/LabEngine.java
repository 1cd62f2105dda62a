package dev.sluice.bench.lab;

import dev.sluice.Sluice;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * One engine of a lab run beside the stream (the queue, schedules, locks, …): its ledger tables, its part in the
 * producer and consumer processes (which the orchestrator kills, restarts and cuts off like the stream's), what
 * "drained" means for it, and its checker. Each engine is switched on by name ({@code --engines}); its checker's
 * figures are the run summary's section of that name, and any {@link Section#failure()} fails the run.
 */
interface LabEngine {

    /** Its name: the {@code --engines} value and the JSON section. */
    String name();

    /** Its ledger tables, in schema {@value Ledger#SCHEMA} (created after {@link Ledger#ddl()}); no indexes the run does not need. */
    String ddl();

    /** Once, in the orchestrator, before any process starts: registers what the processes use (a queue, schedules, …). */
    void setUp(Sluice sluice) throws Exception;

    /** In each producer process, for the run's duration; the returned handle stops it (flushes what it queued). */
    AutoCloseable startProducer(Context ctx) throws Exception;

    /** In each consumer process; the process may be SIGKILLed at any time, so nothing may rely on the close. */
    AutoCloseable startConsumer(Context ctx) throws Exception;

    /**
     * Whether everything that will still resolve has resolved (the orchestrator polls it after the producers stop).
     * By default true: an engine whose every operation commits or not at once (fires, lock writes) has nothing left.
     */
    default boolean drained(Connection c) throws SQLException {
        return true;
    }

    /** After the drain (or its timeout, {@code drained} false): the checker, in SQL over the ledger and Sluice's tables. */
    Section check(Connection c, boolean drained) throws SQLException;

    /**
     * {@code part}, also closed by a shutdown hook: SIGTERM (the orchestrator's stop of a consumer process) runs hooks,
     * not the process's finally blocks. The returned handle closes it and drops the hook.
     */
    static AutoCloseable closedOnStop(AutoCloseable part, String name) {
        Thread hook = new Thread(() -> {
            try {
                part.close();
            } catch (Exception ignored) {
                // stopping anyway
            }
        }, name);
        Runtime.getRuntime().addShutdownHook(hook);
        return () -> {
            part.close();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException ignored) {
                // shutting down already
            }
        };
    }

    /**
     * What a lab process gives its engines.
     *
     * @param sluice      the process's client (schema {@value Ledger#SLUICE_SCHEMA})
     * @param pool        the process's pool (also what the client uses)
     * @param ledger      the process's batched ledger writer (shared by every engine and the stream part)
     * @param instance    the process's name ({@code p1}, {@code c2}, …; a restarted consumer gets a new one)
     * @param durationMs  how long producers run
     * @param jobRate     jobs (or engine operations) per second per producer process
     * @param failureRate share of first attempts whose handler fails (as the stream's)
     * @param hangRate    share of first attempts whose handler hangs past the lease
     * @param leaseMs     the lease of the run (consumers', workers', fleet)
     * @param seed        randomness of the run
     */
    record Context(Sluice sluice, DataSource pool, LedgerWriter ledger, String instance, long durationMs, int jobRate,
                   double failureRate, double hangRate, long leaseMs, long seed) {
    }

    /**
     * A checker's result.
     *
     * @param counts  the figures, in a stable order (the JSON section)
     * @param failure null when nothing that must be zero is not; else why (the run's verdict becomes {@code fail})
     */
    record Section(Map<String, Object> counts, String failure) {

        /**
         * A checker's section from its figures: each {@code {name, query}} pair's query returns one bigint; then the
         * {@code extra} entries; the failure names every figure of {@code mustBeZero} that is not.
         */
        static Section of(Connection c, String[][] figures, List<String> mustBeZero, Map<String, Object> extra)
                throws SQLException {
            Map<String, Object> counts = new LinkedHashMap<>();
            for (String[] f : figures) {
                try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(f[1])) {
                    rs.next();
                    counts.put(f[0], rs.getLong(1));
                }
            }
            counts.putAll(extra);
            List<String> bad = new ArrayList<>();
            for (String name : mustBeZero) {
                if ((Long) counts.get(name) != 0) {
                    bad.add(name + " " + counts.get(name));
                }
            }
            return new Section(counts, bad.isEmpty() ? null : String.join(", ", bad));
        }
    }
}
