package dev.sluice.bench.lab;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.Consumption;
import dev.sluice.SchemaVersion;
import dev.sluice.Sluice;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A lab child process: {@code producer} produces paced, varied messages and records every attempt in
 * the ledger; {@code consumer} consumes every lab group and records every handler call. The
 * orchestrator kills and restarts these processes.
 *
 * <p>Arguments: {@code role instance durationMs rate failureRate hangRate longTx leaseMs seed}; the database URL
 * comes in the environment variable {@value #URL_ENV} (it may carry a password, and a command line is
 * visible to every local user).
 */
public final class LabWorker {
    /** A payload of another schema version: groups consuming version 1 skip it. */
    @SchemaVersion(2)
    public record EventV2(String tag, long n) {
    }

    /** The environment variable the orchestrator passes the database URL in. */
    public static final String URL_ENV = "SLUICE_LAB_DATABASE_URL";

    private LabWorker() {
    }

    public static void main(String[] args) throws Exception {
        String role = args[0];
        String url = System.getenv(URL_ENV);
        if (url == null || url.isBlank()) {
            throw new IllegalArgumentException("the database URL is missing: set " + URL_ENV);
        }
        String instance = args[1];
        long durationMs = Long.parseLong(args[2]);
        int rate = Integer.parseInt(args[3]);
        double failureRate = Double.parseDouble(args[4]);
        double hangRate = Double.parseDouble(args[5]);
        double longTx = Double.parseDouble(args[6]);
        long leaseMs = Long.parseLong(args[7]);
        long seed = Long.parseLong(args[8]);
        java.util.Set<String> engines = java.util.Set.of(args[9].split(","));
        int jobRate = Integer.parseInt(args[10]);
        try (HikariDataSource pool = new HikariDataSource(poolConfig(url, instance));
             // Rows nobody waits for (produce attempts and results, call starts) wait up to 100 ms for company.
             LedgerWriter ledger = new LedgerWriter(() -> pool.getConnection(), Duration.ofSeconds(60), Duration.ofMillis(100));
             // Fleet instances on the consumers' lease, so a killed process's instances expire as fast as its ranges;
             // every process competes for the manager, which runs its passes (janitor TTL sweeps included) every 2 s.
             Sluice sluice = Sluice.builder().dataSource(pool).schema(Ledger.SLUICE_SCHEMA).clientId(instance)
                     .fleetLease(Duration.ofMillis(leaseMs)).maintenanceInterval(Duration.ofSeconds(2)).build()) {
            LabEngine.Context ctx = new LabEngine.Context(sluice, pool, ledger, instance, durationMs, jobRate, failureRate,
                    hangRate, leaseMs, seed);
            List<AutoCloseable> parts = new ArrayList<>();
            try {
                for (LabEngine e : LabEngines.create(engines)) {
                    parts.add(role.equals("producer") ? e.startProducer(ctx) : e.startConsumer(ctx));
                }
                started(instance, "engines " + engines);
                if (role.equals("producer")) {
                    new StreamProducer(sluice, pool, ledger, instance, longTx, seed).run(durationMs, rate);
                } else {
                    consume(sluice, ledger, instance, failureRate, hangRate, leaseMs);
                }
            } finally {
                for (int i = parts.size() - 1; i >= 0; i--) {
                    parts.get(i).close();
                }
            }
        }
    }

    /** The pool of a worker process. */
    static HikariConfig poolConfig(String url, String instance) {
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(url);
        hc.setMaximumPoolSize(30); // the consumers' work (4 groups, the partitioned one per bucket), the ledger writer, long transactions, the engines
        // Connections as the work needs them, not 30 at once: a process starting under load, and every pool after a
        // termination of all lab connections, would otherwise open 30 backends (authentication, cold caches) each.
        hc.setMinimumIdle(4);
        hc.setConnectionTimeout(10_000);
        hc.setInitializationFailTimeout(-1); // the server may be restarting
        // Named, not detected: HikariCP reads the isolation of its first connection, and when that connection fails
        // during the read it keeps -1 and every later connection fails to set it (HikariCP issue #1944) — a pool
        // started while its server terminates connections would never hand out one (docs/getting-started.md).
        hc.setTransactionIsolation("TRANSACTION_READ_COMMITTED");
        hc.addDataSourceProperty("ApplicationName", workerApplicationName(instance));
        return hc;
    }

    /**
     * Logs how long after the JVM's start a part of the process was running: under the lab's load a consumer's start
     * can outlast the kill interval, and then few consumers work at once (see the work directory's logs).
     */
    private static void started(String instance, String what) {
        long ms = System.currentTimeMillis() - java.lang.management.ManagementFactory.getRuntimeMXBean().getStartTime();
        System.err.println(java.time.LocalTime.now() + " lab " + instance + ": " + what + " running " + ms + " ms after the JVM started");
    }

    /** The {@code ApplicationName} of a lab process's connections: the orchestrator's terminations target these. */
    static String workerApplicationName(String instance) {
        return "sluice-lab-worker-" + instance;
    }

    /** Runs a consumer process's stream part until the orchestrator stops (SIGTERM) or kills (SIGKILL) it. */
    private static void consume(Sluice sluice, LedgerWriter ledger, String instance, double failureRate, double hangRate,
                                long leaseMs) throws InterruptedException {
        List<Consumption> running = new StreamConsumer(instance, ledger, failureRate, hangRate, leaseMs).start(sluice);
        started(instance, "stream groups");
        // The redelivery bound counts from here on (see LabTimeline): a consumer still starting takes nothing over.
        try {
            ledger.write(Ledger.CONSUMER_READY, instance, java.time.Instant.now());
        } catch (RuntimeException e) {
            // The ledger gave up (the server was away for a minute): the run goes on, this process counts as not running.
            System.err.println(java.time.LocalTime.now() + " lab " + instance + ": ready row not written: " + e);
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> running.forEach(Consumption::close)));
        Thread.currentThread().join();
    }
}
