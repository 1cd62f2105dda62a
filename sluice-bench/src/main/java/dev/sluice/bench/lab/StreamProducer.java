package dev.sluice.bench.lab;

import dev.sluice.ErrorCode;
import dev.sluice.ProduceOptions;
import dev.sluice.Produced;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/**
 * A lab producer process's stream part: paced, varied messages — keyed, routed, compacted, of another schema
 * version, with idempotency keys and re-sends of committed ones, and some in long producer transactions of which a
 * tenth roll back — each with its attempt row queued in the ledger before the produce and its result row after it.
 *
 * <p>Produces go through {@link Producer#produceAsync} (the producer's batcher coalesces them); a tick every 10 ms
 * sends whatever the rate owes, so a stall (a restart) is caught up instead of lowering the run's total. A long
 * transaction writes its ledger rows in its own transaction, so they exist exactly when its message does; at most
 * {@value #LONG_OPEN} are open at once (a share of {@code longTx} that finds none free is produced normally).
 */
final class StreamProducer {
    /** Message keys per run: enough keys that keyed groups run many chains at once. */
    static final int KEYS = 2_000;
    private static final int LONG_OPEN = 4;
    private static final int MAX_PER_TICK = 2_000;
    private static final String ATTEMPT_SQL = """
        INSERT INTO sluice_lab.produce_attempt (tag, producer, message_key, routing_key, schema_version, at)
        VALUES (?, ?, ?, ?, 1, ?)""";
    private static final String RESULT_SQL = """
        INSERT INTO sluice_lab.produce_result (tag, status, message_id, at) VALUES (?, 'committed', ?, ?)""";

    private final Sluice sluice;
    private final DataSource ds;
    private final LedgerWriter ledger;
    private final String instance;
    private final double longTx;
    private final Random random;
    private final Semaphore longOpen = new Semaphore(LONG_OPEN);
    /** Idempotency keys of committed messages, to re-send (bounded: replaced at random once full). */
    private final List<String> committedKeys = new ArrayList<>();

    StreamProducer(Sluice sluice, DataSource ds, LedgerWriter ledger, String instance, double longTx, long seed) {
        this.sluice = sluice;
        this.ds = ds;
        this.ledger = ledger;
        this.instance = instance;
        this.longTx = longTx;
        this.random = new Random(seed ^ instance.hashCode());
    }

    /** Produces {@code rate} messages a second for {@code durationMs}, then waits for the last outcomes. */
    void run(long durationMs, int rate) throws InterruptedException {
        Producer<String> p1 = sluice.stream(Ledger.STREAM, String.class).producer();
        Producer<LabWorker.EventV2> p2 = sluice.stream(Ledger.STREAM, LabWorker.EventV2.class).producer();
        ExecutorService longRunners = Executors.newFixedThreadPool(LONG_OPEN);
        List<CompletableFuture<?>> outstanding = new ArrayList<>();
        long start = System.nanoTime();
        long n = 0;
        try {
            while (true) {
                long elapsed = System.nanoTime() - start;
                if (elapsed >= TimeUnit.MILLISECONDS.toNanos(durationMs)) {
                    break;
                }
                long owed = Math.min(MAX_PER_TICK, elapsed * rate / 1_000_000_000L - n);
                for (long i = 0; i < owed; i++) {
                    n++;
                    CompletableFuture<?> f = one(p1, p2, longRunners, n);
                    if (f != null) {
                        outstanding.add(f);
                    }
                }
                outstanding.removeIf(CompletableFuture::isDone);
                TimeUnit.MILLISECONDS.sleep(10);
            }
            for (CompletableFuture<?> f : outstanding) {
                try {
                    f.get(60, TimeUnit.SECONDS);
                } catch (Exception e) {
                    // its result row says what happened
                }
            }
        } finally {
            longRunners.shutdown();
            longRunners.awaitTermination(30, TimeUnit.SECONDS);
            p1.close();
            p2.close();
        }
    }

    private CompletableFuture<?> one(Producer<String> p1, Producer<LabWorker.EventV2> p2, ExecutorService longRunners, long n) {
        String tag = instance + "-" + n;
        String key = "k" + random.nextInt(KEYS);
        String routing = switch (random.nextInt(3)) {
            case 0 -> "lab.a." + random.nextInt(3);
            case 1 -> "lab.b." + random.nextInt(3);
            default -> null;
        };
        double r = random.nextDouble();
        boolean longOne = r < longTx;
        if (longOne && longOpen.tryAcquire()) {
            boolean rollback = random.nextInt(10) == 0;
            long hold = random.nextInt(1500);
            String payload = payload(tag, n);
            longRunners.submit(() -> {
                try {
                    longTransaction(p1, tag, payload, key, routing, hold, rollback);
                } finally {
                    longOpen.release();
                }
            });
            return null;
        }
        if (longOne) {
            r = longTx + 0.2 + random.nextDouble() * (1 - longTx - 0.2); // no transaction free: an ordinary message
        }
        if (r < longTx + 0.05) {
            attempt(tag, key, routing, null, null, 2);
            return record(tag, p2.produceAsync(new LabWorker.EventV2(tag, 0),
                    ProduceOptions.builder().messageKey(key).routingKey(routing).build()), null);
        }
        if (r < longTx + 0.15) {
            String ckey = "c" + random.nextInt(5);
            long rank = random.nextInt(10);
            attempt(tag, ckey, routing, null, rank, 1);
            return record(tag, p1.produceAsync(payload(tag, n),
                    ProduceOptions.builder().messageKey(ckey).routingKey(routing).compaction(rank).build()), null);
        }
        String resend = null;
        if (r < longTx + 0.2) {
            synchronized (committedKeys) {
                resend = committedKeys.isEmpty() ? null : committedKeys.get(random.nextInt(committedKeys.size()));
            }
        }
        // A re-send of an earlier committed message must be a duplicate with the original id, writing nothing.
        String ik = resend != null ? resend : random.nextBoolean() ? "ik-" + tag : null;
        attempt(tag, key, routing, ik, null, 1);
        return record(tag, p1.produceAsync(payload(tag, n),
                ProduceOptions.builder().messageKey(key).routingKey(routing).idempotencyKey(ik).build()), resend == null ? ik : null);
    }

    static String payload(String tag, long n) {
        return "{\"tag\": \"" + tag + "\", \"n\": " + n + "}";
    }

    private void attempt(String tag, String key, String routing, String ik, Long rank, int version) {
        ledger.append(Ledger.PRODUCE_ATTEMPT, tag, instance, key, routing, ik, rank, version, Instant.now());
    }

    /** Queues the produce's result row when it completes; a new idempotency key that committed may be re-sent. */
    private CompletableFuture<?> record(String tag, CompletableFuture<Produced> produce, String newKey) {
        return produce.handle((p, error) -> {
            if (error == null) {
                ledger.append(Ledger.PRODUCE_RESULT, tag, p.duplicate() ? "duplicate" : "committed", p.id(), null, Instant.now());
                if (newKey != null && !p.duplicate()) {
                    remember(newKey);
                }
                return null;
            }
            Throwable e = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
            boolean unknown = !(e instanceof SluiceException s) || s.code() == ErrorCode.COMMIT_OUTCOME_UNKNOWN
                    || s.code() == ErrorCode.DATABASE_UNAVAILABLE || s.code() == ErrorCode.DATABASE_ERROR;
            String text = String.valueOf(e.getMessage());
            ledger.append(Ledger.PRODUCE_RESULT, tag, unknown ? "unknown" : "rejected", null,
                    text.substring(0, Math.min(300, text.length())), Instant.now());
            return null;
        });
    }

    private void remember(String key) {
        synchronized (committedKeys) {
            if (committedKeys.size() < 2_000) {
                committedKeys.add(key);
            } else {
                committedKeys.set(random.nextInt(committedKeys.size()), key);
            }
        }
    }

    /** The long-transaction fault: the message and its ledger rows commit (or roll back) together, late. */
    private void longTransaction(Producer<String> p, String tag, String payload, String key, String routing, long holdMs,
                                 boolean rollback) {
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            Produced produced = p.produceInTransaction(c, payload, ProduceOptions.builder().messageKey(key).routingKey(routing).build());
            Timestamp now = Timestamp.from(Instant.now());
            try (PreparedStatement a = c.prepareStatement(ATTEMPT_SQL); PreparedStatement r = c.prepareStatement(RESULT_SQL)) {
                a.setString(1, tag);
                a.setString(2, instance);
                a.setString(3, key);
                a.setString(4, routing);
                a.setTimestamp(5, now);
                a.executeUpdate();
                r.setString(1, tag);
                r.setLong(2, produced.id());
                r.setTimestamp(3, now);
                r.executeUpdate();
            }
            Thread.sleep(holdMs);
            if (rollback) {
                c.rollback();
            } else {
                c.commit();
            }
        } catch (SQLException | RuntimeException e) {
            // The transaction died (backend terminated, server restarted): neither message nor ledger rows exist.
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
