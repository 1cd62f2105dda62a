package dev.sluice.bench.lab;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.ConsumeOptions;
import dev.sluice.Consumption;
import dev.sluice.ErrorCode;
import dev.sluice.Message;
import dev.sluice.Outcome;
import dev.sluice.ProduceOptions;
import dev.sluice.Produced;
import dev.sluice.Producer;
import dev.sluice.SchemaVersion;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

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
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(url);
        hc.setMaximumPoolSize(26); // 4 groups x 8 handlers writing ledger rows (not all at once), plus the consumers' own work
        hc.setConnectionTimeout(10_000);
        hc.setInitializationFailTimeout(-1); // the server may be restarting
        hc.addDataSourceProperty("ApplicationName", workerApplicationName(instance));
        try (HikariDataSource pool = new HikariDataSource(hc);
             LedgerWriter ledger = new LedgerWriter(() -> pool.getConnection(), Duration.ofSeconds(60));
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
                if (role.equals("producer")) {
                    produce(sluice, pool, instance, durationMs, rate, longTx, seed);
                } else {
                    consume(sluice, pool, instance, failureRate, hangRate, leaseMs);
                }
            } finally {
                for (int i = parts.size() - 1; i >= 0; i--) {
                    parts.get(i).close();
                }
            }
        }
    }

    /** The {@code ApplicationName} of a lab process's connections: the orchestrator's terminations target these. */
    static String workerApplicationName(String instance) {
        return "sluice-lab-worker-" + instance;
    }

    // ------------------------------------------------------------------ producer

    private static void produce(Sluice sluice, DataSource ds, String instance, long durationMs, int rate, double longTx,
                                long seed) throws Exception {
        Producer<String> p1 = sluice.stream(Ledger.STREAM, String.class).producer();
        Producer<EventV2> p2 = sluice.stream(Ledger.STREAM, EventV2.class).producer();
        Random random = new Random(seed ^ instance.hashCode());
        ExecutorService longRunners = Executors.newFixedThreadPool(4);
        List<String> idempotencyKeys = new ArrayList<>();
        long start = System.nanoTime();
        long next = start;
        long n = 0;
        while (System.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(durationMs)) {
            next += 1_000_000_000L / rate;
            long sleep = next - System.nanoTime();
            if (sleep > 0) {
                TimeUnit.NANOSECONDS.sleep(sleep);
            }
            n++;
            final long seq = n;
            String tag = instance + "-" + seq;
            String key = "k" + random.nextInt(20);
            String routing = switch (random.nextInt(3)) {
                case 0 -> "lab.a." + random.nextInt(3);
                case 1 -> "lab.b." + random.nextInt(3);
                default -> null;
            };
            double r = random.nextDouble();
            if (r < longTx) {
                boolean rollback = random.nextInt(10) == 0;
                long hold = random.nextInt(1500);
                String payload = payload(tag, n);
                longRunners.submit(() -> longTransaction(ds, p1, instance, tag, payload, key, routing, hold, rollback));
            } else if (r < longTx + 0.05) {
                attempt(ds, tag, instance, key, routing, null, null, 2);
                record(ds, tag, () -> p2.produce(new EventV2(tag, 0), ProduceOptions.builder().messageKey(key).routingKey(routing).build()));
            } else if (r < longTx + 0.15) {
                String ckey = "c" + random.nextInt(5);
                long rank = random.nextInt(10);
                attempt(ds, tag, instance, ckey, routing, null, rank, 1);
                record(ds, tag, () -> p1.produce(payload(tag, seq),
                        ProduceOptions.builder().messageKey(ckey).routingKey(routing).compaction(rank).build()));
            } else if (r < longTx + 0.2 && !idempotencyKeys.isEmpty()) {
                // A re-send of an earlier message: must be a duplicate with the original id, writing nothing.
                String ik = idempotencyKeys.get(random.nextInt(idempotencyKeys.size()));
                attempt(ds, tag, instance, key, routing, ik, null, 1);
                record(ds, tag, () -> p1.produce(payload(tag, seq), ProduceOptions.builder().messageKey(key).routingKey(routing)
                        .idempotencyKey(ik).build()));
            } else {
                String ik = random.nextBoolean() ? "ik-" + tag : null;
                attempt(ds, tag, instance, key, routing, ik, null, 1);
                boolean ok = record(ds, tag, () -> p1.produce(payload(tag, seq),
                        ProduceOptions.builder().messageKey(key).routingKey(routing).idempotencyKey(ik).build()));
                if (ok && ik != null && idempotencyKeys.size() < 1000) {
                    idempotencyKeys.add(ik);
                }
            }
        }
        longRunners.shutdown();
        longRunners.awaitTermination(30, TimeUnit.SECONDS);
        p1.close();
        p2.close();
    }

    private static String payload(String tag, long n) {
        return "{\"tag\": \"" + tag + "\", \"n\": " + n + "}";
    }

    private interface Call {
        Produced run();
    }

    /** Runs a produce and records its outcome; returns whether it committed (as new or duplicate). */
    private static boolean record(DataSource ds, String tag, Call call) {
        String status;
        Long id = null;
        String error = null;
        try {
            Produced p = call.run();
            status = p.duplicate() ? "duplicate" : "committed";
            id = p.id();
        } catch (SluiceException e) {
            boolean unknown = e.code() == ErrorCode.COMMIT_OUTCOME_UNKNOWN || e.code() == ErrorCode.DATABASE_UNAVAILABLE
                    || e.code() == ErrorCode.DATABASE_ERROR;
            status = unknown ? "unknown" : "rejected";
            error = e.getMessage();
        }
        finish(ds, tag, status, id, error);
        return "committed".equals(status) || "duplicate".equals(status);
    }

    private static void attempt(DataSource ds, String tag, String producer, String key, String routing, String ik, Long rank,
                                int version) {
        retryLedger(() -> {
            try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement("INSERT INTO sluice_lab.produce_attempt"
                    + " (tag, producer, message_key, routing_key, idempotency_key, compaction_rank, schema_version, status)"
                    + " VALUES (?, ?, ?, ?, ?, ?, ?, 'attempt') ON CONFLICT (tag) DO NOTHING")) {
                ps.setString(1, tag);
                ps.setString(2, producer);
                ps.setString(3, key);
                ps.setString(4, routing);
                ps.setString(5, ik);
                ps.setObject(6, rank);
                ps.setInt(7, version);
                ps.executeUpdate();
            }
        });
    }

    private static void finish(DataSource ds, String tag, String status, Long id, String error) {
        retryLedger(() -> {
            try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement("UPDATE sluice_lab.produce_attempt"
                    + " SET status = ?, message_id = ?, error = ?, finished_at = clock_timestamp() WHERE tag = ?")) {
                ps.setString(1, status);
                ps.setObject(2, id);
                ps.setString(3, error == null ? null : error.substring(0, Math.min(500, error.length())));
                ps.setString(4, tag);
                ps.executeUpdate();
            }
        });
    }

    /** The long-transaction fault: the message and its ledger row commit (or roll back) together, late. */
    private static void longTransaction(DataSource ds, Producer<String> p, String producer, String tag, String payload,
                                        String key, String routing, long holdMs, boolean rollback) {
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            Produced produced = p.produceInTransaction(c, payload, ProduceOptions.builder().messageKey(key).routingKey(routing).build());
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO sluice_lab.produce_attempt (tag, producer, message_key,"
                    + " routing_key, schema_version, status, message_id, finished_at) VALUES (?, ?, ?, ?, 1, 'committed', ?, clock_timestamp())")) {
                ps.setString(1, tag);
                ps.setString(2, producer);
                ps.setString(3, key);
                ps.setString(4, routing);
                ps.setLong(5, produced.id());
                ps.executeUpdate();
            }
            Thread.sleep(holdMs);
            if (rollback) {
                c.rollback();
            } else {
                c.commit();
            }
        } catch (SQLException | RuntimeException e) {
            // The transaction died (backend terminated, server restarted): neither message nor ledger row exists.
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private interface LedgerWrite {
        void run() throws SQLException;
    }

    /** Ledger writes survive backend terminations and restarts by retrying. */
    private static void retryLedger(LedgerWrite write) {
        for (int attempt = 0; ; attempt++) {
            try {
                write.run();
                return;
            } catch (SQLException e) {
                if (attempt > 200) {
                    throw new IllegalStateException("ledger unavailable", e);
                }
                try {
                    // After a termination the pool hands out each dead connection once: go through them quickly.
                    Thread.sleep(attempt < 20 ? 5 : 100);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    // ------------------------------------------------------------------ consumer

    private static void consume(Sluice sluice, DataSource ds, String instance, double failureRate, double hangRate,
                                long leaseMs) throws InterruptedException {
        ConsumeOptions options = ConsumeOptions.defaults().withLeaseTimeout(Duration.ofMillis(leaseMs))
                .withPollInterval(Duration.ofMillis(200)).withIdleCheck(Duration.ofSeconds(2)).withBatchSize(20)
                // 8 handlers per group: at the default rates about 1 in 100 first deliveries hangs for two leases,
                // so several handlers per group are hung at any moment; with 4 a process often had none free
                // and a range it took over from a killed process waited for one (the CI smoke once: 9.4 s).
                .withConcurrency(8).withShutdownTimeout(Duration.ofSeconds(5));
        List<Consumption> running = new ArrayList<>();
        for (String group : LabGroups.ALL) {
            running.add(sluice.stream(Ledger.STREAM, String.class).consumerGroup(group)
                    .consume(m -> handle(ds, instance, group, m, failureRate, hangRate, leaseMs), options));
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> running.forEach(Consumption::close)));
        Thread.currentThread().join(); // until the orchestrator stops (SIGTERM) or kills (SIGKILL) us
    }

    /** Numbers this process's handler calls: {@code <instance>-<n>} is the ledger's call_id. */
    private static final java.util.concurrent.atomic.AtomicLong CALLS = new java.util.concurrent.atomic.AtomicLong();

    private static Outcome handle(DataSource ds, String instance, String group, Message<String> m, double failureRate,
                                  double hangRate, long leaseMs) throws Exception {
        String tag = tagOf(m.payload());
        String callId = instance + "-" + CALLS.incrementAndGet();
        HandlerCall call = (phase, outcome) -> call(ds, group, instance, callId, m, tag, phase, outcome);
        call.record("start", null);
        int bucket = Math.floorMod((tag + "/" + group).hashCode(), 10_000);
        if (m.attempt() == 1 && bucket < hangRate * 10_000) {
            Thread.sleep(2 * leaseMs); // hangs past the lease: renewal must keep it, nothing redelivered meanwhile
        }
        if (bucket >= 9_990 - failureRate * 100) {
            call.record("end", "terminal");
            return Outcome.terminal("lab: permanent failure");
        }
        if (m.attempt() == 1 && bucket >= 5_000 && bucket < 5_000 + failureRate * 10_000) {
            call.record("end", "failed");
            throw new IllegalStateException("lab: transient failure");
        }
        call.record("end", "success");
        return Outcome.success();
    }

    static String tagOf(String payload) {
        int i = payload.indexOf("\"tag\": \"");
        if (i < 0) {
            return null;
        }
        int from = i + 8;
        return payload.substring(from, payload.indexOf('"', from));
    }

    /**
     * Records a handler call. A start that cannot be written fails the delivery (it is retried: nothing ran);
     * an end is retried until written, so a handler that ran is never recorded as unfinished (which would
     * look like a message held at a kill).
     */
    private interface HandlerCall {
        void record(String phase, String outcome) throws SQLException;
    }

    private static void call(DataSource ds, String group, String instance, String callId, Message<String> m, String tag,
                             String phase, String outcome) throws SQLException {
        if (phase.equals("end")) {
            retryLedger(() -> insertCall(ds, group, instance, callId, m, tag, phase, outcome));
        } else {
            insertCall(ds, group, instance, callId, m, tag, phase, outcome);
        }
    }

    private static void insertCall(DataSource ds, String group, String instance, String callId, Message<String> m, String tag,
                                   String phase, String outcome) throws SQLException {
        try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement("INSERT INTO sluice_lab.handler_call"
                + " (group_name, instance, call_id, message_id, tag, attempt, phase, outcome) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")) {
            ps.setString(1, group);
            ps.setString(2, instance);
            ps.setString(3, callId);
            ps.setLong(4, m.id());
            ps.setString(5, tag);
            ps.setInt(6, m.attempt());
            ps.setString(7, phase);
            ps.setString(8, outcome);
            ps.executeUpdate();
        }
    }
}
