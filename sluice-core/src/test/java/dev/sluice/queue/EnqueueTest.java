package dev.sluice.queue;

import static dev.sluice.queue.QueueFixture.assertCode;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.EnqueueOptions;
import dev.sluice.ErrorCode;
import dev.sluice.JobHandle;
import dev.sluice.JobState;
import dev.sluice.NewJob;
import dev.sluice.Queue;
import dev.sluice.QueueOptions;
import dev.sluice.Sluice;
import dev.sluice.WorkOptions;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.internal.notify.Channels;
import dev.sluice.internal.notify.Notifications;
import dev.sluice.testing.CountingDataSource;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.postgresql.PGNotification;

/** Enqueue: stored shape, stamps, delays, unique keys (also under races), batches, transactions, wake-ups, bad input. */
@SluiceTest
class EnqueueTest {
    static Sluice sluice;
    static QueueFixture rows;

    record Email(String to, String subject) {
    }

    @BeforeAll
    static void setUp(TestDatabase db) {
        sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build();
        sluice.system().register();
        rows = new QueueFixture(db);
    }

    @AfterAll
    static void tearDown() {
        sluice.close();
    }

    @Test
    void aJobStoresItsExactBytesAndTheQueueOptionsStampedOnTheRow() {
        QueueOptions opts = QueueOptions.builder().visibilityTimeout(Duration.ofSeconds(7)).maxAttempts(4)
                .backoffBase(Duration.ofMillis(250)).maxBackoff(Duration.ofSeconds(9)).deadLetterRetention(Duration.ofDays(2))
                .build();
        Queue<Email> q = sluice.queue("stamps", Email.class, opts);
        long id = q.enqueue(new Email("ada@example.com", "hi"), EnqueueOptions.builder().priority(5)
                .header("traceparent", "00-abc-01").uniqueKey("welcome-ada").build());

        Map<String, Object> row = rows.job(id);
        assertThat(row.get("queue")).isEqualTo("stamps");
        assertThat(row.get("payload")).isEqualTo("{\"to\":\"ada@example.com\",\"subject\":\"hi\"}");
        assertThat(row.get("content_type")).isEqualTo("application/json");
        assertThat(row.get("state")).isEqualTo("pending");
        assertThat(row.get("priority")).isEqualTo(5);
        assertThat(row.get("attempts")).isEqualTo(0);
        assertThat(row.get("unique_key")).isEqualTo("welcome-ada");
        assertThat(row.get("headers").toString()).isEqualTo("{\"traceparent\": \"00-abc-01\"}");
        assertThat(row.get("visibility_timeout_ns")).isEqualTo(7_000_000_000L);
        assertThat(row.get("max_attempts")).isEqualTo(4);
        assertThat(row.get("backoff_base_ns")).isEqualTo(250_000_000L);
        assertThat(row.get("backoff_max_ns")).isEqualTo(9_000_000_000L);
        assertThat(row.get("dead_letter_retention_ns")).isEqualTo(Duration.ofDays(2).toNanos());
        assertThat(row.get("claim_token")).isNull();
        assertThat(rows.scalar("SELECT count(*) FROM " + rows.q + ".job WHERE id = ? AND run_at = created_at", id)).isEqualTo(1);

        // Another handle on the same queue stamps its own options; the first job keeps its stamps.
        long other = sluice.queue("stamps", Email.class).enqueue(new Email("bob@example.com", "yo"));
        assertThat(rows.job(other).get("max_attempts")).isEqualTo(QueueOptions.DEFAULT_MAX_ATTEMPTS);
        assertThat(rows.job(id).get("max_attempts")).isEqualTo(4);
        assertThat(q.admin().job(id)).get().satisfies(j -> {
            assertThat(j.state()).isEqualTo(JobState.PENDING);
            assertThat(j.visibilityTimeout()).isEqualTo(Duration.ofSeconds(7));
            assertThat(j.headers()).containsEntry("traceparent", "00-abc-01");
            assertThat(j.payloadBytes()).isEqualTo("{\"to\":\"ada@example.com\",\"subject\":\"hi\"}".length());
        });
    }

    @Test
    void delayWinsOverRunAtAndRunAtIsKeptAsGiven() {
        Queue<String> q = sluice.queue("times", String.class);
        Instant past = Instant.parse("2020-01-02T03:04:05.123456Z");
        long delayed = q.enqueue("d", EnqueueOptions.builder().delay(Duration.ofHours(1)).runAt(past).build());
        long at = q.enqueue("r", EnqueueOptions.builder().runAt(past).expiresAt(past.plusSeconds(60)).build());

        double wait = rows.seconds("SELECT extract(epoch FROM run_at - created_at) FROM " + rows.q + ".job WHERE id = ?", delayed);
        assertThat(wait).isEqualTo(3600.0);
        assertThat(q.admin().job(at).orElseThrow().runAt()).isEqualTo(past);
        assertThat(q.admin().job(at).orElseThrow().expiresAt()).isEqualTo(past.plusSeconds(60));
    }

    @Test
    void aLiveDuplicateUniqueKeyReturnsTheExistingIdAndAfterAckTheKeyIsFree() {
        Queue<String> q = sluice.queue("unique", String.class);
        long first = q.enqueue("a", EnqueueOptions.unique("report-2026-01"));
        long dup = q.enqueue("b", EnqueueOptions.unique("report-2026-01"));
        assertThat(dup).isEqualTo(first);
        assertThat(rows.scalar("SELECT count(*) FROM " + rows.q + ".job WHERE queue = 'unique'")).isEqualTo(1);
        // The key is per queue.
        long elsewhere = sluice.queue("unique-other", String.class).enqueue("c", EnqueueOptions.unique("report-2026-01"));
        assertThat(elsewhere).isNotEqualTo(first);

        // Still live while processing.
        JobHandle<String> h = q.claim(1).get(0);
        assertThat(q.enqueue("d", EnqueueOptions.unique("report-2026-01"))).isEqualTo(first);
        assertThat(h.ack()).isTrue();

        long next = q.enqueue("e", EnqueueOptions.unique("report-2026-01"));
        assertThat(next).isNotEqualTo(first);
        assertThat(q.admin().job(next).orElseThrow().uniqueKey()).isEqualTo("report-2026-01");

        // Dead jobs free the key too.
        assertThat(q.claim(1).get(0).terminal("not needed")).isTrue();
        assertThat(q.enqueue("f", EnqueueOptions.unique("report-2026-01"))).isNotEqualTo(next);
    }

    @Test
    void anEnqueuerOfAKeyWhoseHolderIsUncommittedWaitsAndGetsTheHoldersId(TestDatabase db) throws Exception {
        Queue<String> q = sluice.queue("unique-race", String.class);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (Connection a = db.connect()) {
            a.setAutoCommit(false);
            long held = q.enqueueInTransaction(a, "first", EnqueueOptions.unique("k"));
            // B's insert meets A's uncommitted row on the unique index and waits for A to end.
            Future<Long> b = pool.submit(() -> q.enqueue("second", EnqueueOptions.unique("k")));
            Thread.sleep(300);
            assertThat(b.isDone()).as("B waits for A's transaction").isFalse();
            a.commit();
            assertThat(b.get(10, TimeUnit.SECONDS)).isEqualTo(held);
        } finally {
            pool.shutdownNow();
        }
        assertThat(rows.scalar("SELECT count(*) FROM " + rows.q + ".job WHERE queue = 'unique-race'")).isEqualTo(1);

        // And when the holder rolls back, the waiter writes its own job.
        try (Connection a = db.connect()) {
            a.setAutoCommit(false);
            q.enqueueInTransaction(a, "doomed", EnqueueOptions.unique("k2"));
            ExecutorService pool2 = Executors.newSingleThreadExecutor();
            try {
                Future<Long> b = pool2.submit(() -> q.enqueue("survivor", EnqueueOptions.unique("k2")));
                Thread.sleep(300);
                a.rollback();
                long id = b.get(10, TimeUnit.SECONDS);
                assertThat(rows.job(id).get("payload")).isEqualTo("survivor");
            } finally {
                pool2.shutdownNow();
            }
        }
    }

    @Test
    void manyConcurrentEnqueuersOfOneKeyAllGetOneId() throws Exception {
        Queue<String> q = sluice.queue("unique-stampede", String.class);
        int racers = 8;
        for (int round = 0; round < 5; round++) {
            String key = "key-" + round;
            CyclicBarrier start = new CyclicBarrier(racers);
            ExecutorService pool = Executors.newFixedThreadPool(racers);
            try {
                List<Future<Long>> ids = new ArrayList<>();
                for (int i = 0; i < racers; i++) {
                    int n = i;
                    ids.add(pool.submit(() -> {
                        start.await(10, TimeUnit.SECONDS);
                        return q.enqueue("racer " + n, EnqueueOptions.unique(key));
                    }));
                }
                List<Long> got = new ArrayList<>();
                for (Future<Long> f : ids) {
                    got.add(f.get(30, TimeUnit.SECONDS));
                }
                assertThat(got).as("round " + round).containsOnly(got.get(0));
            } finally {
                pool.shutdownNow();
            }
            assertThat(rows.scalar("SELECT count(*) FROM " + rows.q + ".job WHERE queue = 'unique-stampede' AND unique_key = ?", key))
                    .isEqualTo(1);
        }
    }

    @Test
    void aBatchIsOneTransactionWithIdsInOrderAndRepeatedKeysResolvedToOneId() {
        Queue<String> q = sluice.queue("batch", String.class);
        long live = q.enqueue("live", EnqueueOptions.unique("u1"));
        List<Long> ids = q.enqueueBatch(List.of(NewJob.of("a"), NewJob.of("b", EnqueueOptions.unique("u1")),
                NewJob.of("c", EnqueueOptions.unique("u2")), NewJob.of("d", EnqueueOptions.unique("u2")), NewJob.of("e")));
        assertThat(ids).hasSize(5);
        assertThat(ids.get(1)).isEqualTo(live);
        assertThat(ids.get(3)).isEqualTo(ids.get(2));
        assertThat(ids.get(0)).isLessThan(ids.get(2));
        assertThat(ids.get(2)).isLessThan(ids.get(4));
        assertThat(rows.rows("SELECT payload FROM " + rows.q + ".job WHERE queue = 'batch' ORDER BY id"))
                .extracting(r -> r.get("payload")).containsExactly("live", "a", "c", "e");
        // One bad job refuses the whole batch before any round trip.
        assertCode(ErrorCode.NULL_PAYLOAD, () -> q.enqueueBatch(List.of(NewJob.of("x"), new NewJob<>(null, null))));
        assertThat(rows.scalar("SELECT count(*) FROM " + rows.q + ".job WHERE queue = 'batch'")).isEqualTo(4);
        assertThat(q.enqueueBatch(List.of())).isEmpty();
    }

    @Test
    void enqueueInTransactionExistsIfAndOnlyIfTheCallerCommits(TestDatabase db) throws Exception {
        Queue<String> q = sluice.queue("outbox", String.class);
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            q.enqueueInTransaction(c, "rolled back", EnqueueOptions.NONE);
            c.rollback();
            long kept = q.enqueueInTransaction(c, "committed", EnqueueOptions.NONE);
            assertThat(q.admin().job(kept)).as("invisible before the caller commits").isEmpty();
            c.commit();
            assertThat(q.admin().job(kept)).isPresent();
        }
        assertThat(rows.rows("SELECT payload FROM " + rows.q + ".job WHERE queue = 'outbox'"))
                .extracting(r -> r.get("payload")).containsExactly("committed");
        try (Connection c = db.connect()) {
            assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> q.enqueueInTransaction(c, "x", EnqueueOptions.NONE));
        }
        assertThat(rows.scalar("SELECT count(*) FROM " + rows.q + ".job WHERE queue = 'outbox'")).isEqualTo(1);
    }

    @Test
    void oneNotificationPerQueuePerEnqueuingTransactionThatStreamWaitersIgnore(TestDatabase db) throws Exception {
        Queue<String> q = sluice.queue("wake", String.class);
        try (Connection listener = db.connect()) {
            try (Statement s = listener.createStatement()) {
                s.execute("LISTEN \"" + Channels.forSchema(db.schema()) + "\"");
            }
            q.enqueueBatch(List.of(NewJob.of("a"), NewJob.of("b"), NewJob.of("c")));
            assertThat(Notifications.drain(listener, 1000)).extracting(PGNotification::getParameter).containsExactly("q:wake");

            try (Connection c = db.connect()) {
                c.setAutoCommit(false);
                q.enqueueInTransaction(c, "d", EnqueueOptions.NONE);
                q.enqueueInTransaction(c, "e", EnqueueOptions.NONE);
                sluice.queue("wake-2", String.class).enqueueInTransaction(c, "f", EnqueueOptions.NONE);
                c.commit();
            }
            assertThat(Notifications.drain(listener, 1000)).extracting(PGNotification::getParameter).containsExactlyInAnyOrder("q:wake", "q:wake-2");
        }
    }

    @Test
    void badInputIsRejectedBeforeAnyRoundTripAndWritesNothing(TestDatabase db) {
        CountingDataSource ds = new CountingDataSource(db.dataSource());
        try (Sluice counted = Sluice.builder().dataSource(ds).schema(db.schema()).build()) {
            Queue<String> q = counted.queue("bad-input", String.class);
            assertCode(ErrorCode.INVALID_NAME, () -> counted.queue("Bad Name", String.class).enqueue("x"));
            assertCode(ErrorCode.INVALID_NAME, () -> counted.queue("__system.x").claim(1));
            assertCode(ErrorCode.NULL_PAYLOAD, () -> q.enqueue(null));
            assertCode(ErrorCode.PAYLOAD_TOO_LARGE, () -> q.withOptions(QueueOptions.builder().maxPayloadBytes(4).build())
                    .enqueue("12345"));
            assertCode(ErrorCode.PAYLOAD_NOT_SERIALIZABLE, () -> counted.queue("bad-input", Object.class).enqueue(new Object()));
            assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> q.enqueue("x", EnqueueOptions.priority(1001)));
            assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> q.enqueue("x", EnqueueOptions.delay(Duration.ofSeconds(-1))));
            Instant t = Instant.parse("2030-01-01T00:00:00Z");
            assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> q.enqueue("x", EnqueueOptions.builder().runAt(t).expiresAt(t).build()));
            assertCode(ErrorCode.INVALID_KEY, () -> q.enqueue("x", EnqueueOptions.unique("")));
            assertCode(ErrorCode.INVALID_KEY, () -> q.enqueue("x", EnqueueOptions.unique("k".repeat(257))));
            assertCode(ErrorCode.INVALID_HEADERS, () -> q.enqueue("x", EnqueueOptions.builder().header("", "v").build()));
            assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> q.claim(0));
            assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> q.claim(1001));
            assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> q.admin().jobs(JobState.PENDING, null, 0));
            assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> q.admin().deadLetters(null, 1001));
            assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> QueueOptions.builder().visibilityTimeout(Duration.ZERO).build());
            assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> QueueOptions.builder().maxAttempts(0).build());
            assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> QueueOptions.builder().backoffBase(Duration.ofSeconds(-1)).build());
            assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> QueueOptions.builder().backoffBase(Duration.ofMinutes(2))
                    .maxBackoff(Duration.ofMinutes(1)).build());
            assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> QueueOptions.builder().deadLetterRetention(Duration.ZERO).build());
            assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> QueueOptions.builder().maxPayloadBytes(0).build());
            assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> WorkOptions.defaults().withConcurrency(0));
            assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> WorkOptions.defaults().withPollInterval(Duration.ZERO));
            assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> WorkOptions.defaults().withMaintenanceInterval(Duration.ofMillis(-1)));
            assertThat(ds.opened()).isZero();
        }
        assertThat(rows.scalar("SELECT count(*) FROM " + rows.q + ".job WHERE queue = 'bad-input'")).isZero();
    }

    @Test
    void queuesNeedTheControlPlaneWhenTheClientMayNotInstallIt(TestDatabase db) {
        String bare = db.freshSchemaName("no_plane");
        try (Sluice other = Sluice.builder().dataSource(db.dataSource()).schema(bare).migrate(false).build()) {
            assertCode(ErrorCode.SYSTEM_NOT_REGISTERED, () -> other.queue("jobs").enqueue("x".getBytes(StandardCharsets.UTF_8)));
            assertCode(ErrorCode.SYSTEM_NOT_REGISTERED, () -> other.lock("l").tryAcquire(Duration.ofSeconds(1)));
            try (Sluice installer = Sluice.builder().dataSource(db.dataSource()).schema(bare).build()) {
                installer.system().register();
            }
            assertThat(other.queue("jobs").enqueue("x".getBytes(StandardCharsets.UTF_8))).isPositive();
        }
    }
}
