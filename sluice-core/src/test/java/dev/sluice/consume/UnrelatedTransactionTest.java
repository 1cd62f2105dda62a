package dev.sluice.consume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.ConsumeOptions;
import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.GroupConfig;
import dev.sluice.Outcome;
import dev.sluice.ProduceOptions;
import dev.sluice.Produced;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.StartPosition;
import dev.sluice.StoredMessage;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * An unrelated long transaction never holds stream delivery (docs/fence.md): while it stays open — it holds an
 * xid, or is prepared, or runs in another database, or is a long read-only query — a group registered at the
 * head gets 1,000 messages, each within 2 s of its commit, and a fenced read sees them too. (Before the fence
 * looked at locks, every one of these but the read-only query stalled delivery for as long as it stayed open.)
 */
@SluiceTest
class UnrelatedTransactionTest {
    private static final int MESSAGES = 1_000;
    private static final Duration WITHIN = Duration.ofSeconds(2);

    private static TestDatabase db;
    private static String business;
    private static final ExecutorService background = Executors.newCachedThreadPool();

    @BeforeAll
    static void setUp(TestDatabase database) {
        db = database;
        business = "\"" + db.freshSchemaName("business") + "\".business";
        db.execute("CREATE SCHEMA " + business.substring(0, business.indexOf('.')));
        db.execute("CREATE TABLE " + business + " (n integer)");
    }

    @AfterAll
    static void tearDown() {
        background.shutdownNow();
    }

    /** The kinds of unrelated transaction; each is opened before the group exists and closed after the test. */
    enum Pin {
        /** Holds an xid after a write to a table of its own. */
        XID,
        /** A prepared (2PC) transaction with an xid, never finished during the test. */
        PREPARED,
        /** Holds an xid in another database of the same server. */
        OTHER_DATABASE,
        /** A long read-only query in a repeatable-read transaction (a snapshot, no xid). */
        READ_ONLY_QUERY
    }

    /** An open unrelated transaction; {@link #stillOpen} proves it lasted the whole test. */
    private interface Held extends AutoCloseable {
        boolean stillOpen() throws SQLException;

        @Override
        void close() throws Exception;
    }

    private static String text(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            return rs.next() ? rs.getString(1) : null;
        }
    }

    /** An open transaction on {@code c} that takes its xid now; closing it rolls back, closes {@code c}, then runs {@code after}. */
    private static Held holdingXid(Connection c, Runnable after) throws SQLException {
        String xid = text(c, "SELECT pg_current_xact_id()::text");
        return new Held() {
            public boolean stillOpen() throws SQLException {
                try (Connection a = db.connect()) {
                    return "in progress".equals(text(a, "SELECT pg_xact_status('" + xid + "'::xid8)"));
                }
            }

            public void close() throws Exception {
                c.rollback();
                c.close();
                after.run();
            }
        };
    }

    private static Held hold(Pin pin) throws Exception {
        switch (pin) {
            case XID -> {
                Connection c = db.connect();
                c.setAutoCommit(false);
                try (Statement s = c.createStatement()) {
                    s.execute("INSERT INTO " + business + " VALUES (1)");
                }
                return holdingXid(c, () -> { });
            }
            case PREPARED -> {
                String gid = "sluice-unrelated-" + UUID.randomUUID();
                try (Connection c = db.connect()) {
                    c.setAutoCommit(false);
                    try (Statement s = c.createStatement()) {
                        s.execute("INSERT INTO " + business + " VALUES (2)");
                        s.execute("PREPARE TRANSACTION '" + gid + "'");
                    }
                }
                return new Held() {
                    public boolean stillOpen() throws SQLException {
                        try (Connection a = db.connect()) {
                            return text(a, "SELECT gid FROM pg_prepared_xacts WHERE gid = '" + gid + "'") != null;
                        }
                    }

                    public void close() {
                        db.execute("ROLLBACK PREPARED '" + gid + "'");
                    }
                };
            }
            case OTHER_DATABASE -> {
                String other = "sluice_unrelated_" + UUID.randomUUID().toString().replace("-", "");
                db.execute("CREATE DATABASE " + other);
                Connection c = DriverManager.getConnection(db.jdbcUrl().replaceFirst("^(jdbc:postgresql://[^/]+/)[^?]*", "$1" + other));
                c.setAutoCommit(false);
                try (Statement s = c.createStatement()) {
                    s.execute("CREATE TABLE busy (n integer)");
                    s.execute("INSERT INTO busy VALUES (1)");
                }
                return holdingXid(c, () -> db.execute("DROP DATABASE " + other));
            }
            case READ_ONLY_QUERY -> {
                Connection c = db.connect();
                c.setAutoCommit(false);
                c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
                Statement s = c.createStatement();
                String pid = text(c, "SELECT pg_backend_pid()::text");
                Future<?> query = background.submit(() -> {
                    s.execute("SELECT count(*) FROM pg_class, pg_sleep(600)");
                    return null;
                });
                try (Connection a = db.connect()) {
                    await().atMost(Duration.ofSeconds(10)).until(() -> "active".equals(text(a,
                            "SELECT state FROM pg_stat_activity WHERE pid = " + pid + " AND query LIKE '%pg_sleep(600)%'")));
                }
                return new Held() {
                    public boolean stillOpen() throws SQLException {
                        try (Connection a = db.connect()) {
                            return "active".equals(text(a, "SELECT state FROM pg_stat_activity WHERE pid = " + pid));
                        }
                    }

                    public void close() throws Exception {
                        s.cancel();
                        try {
                            query.get(10, TimeUnit.SECONDS);
                        } catch (java.util.concurrent.ExecutionException expected) {
                            // cancelled
                        }
                        c.rollback();
                        c.close();
                    }
                };
            }
            default -> throw new IllegalArgumentException(pin.name());
        }
    }

    @ParameterizedTest
    @EnumSource(Pin.class)
    void anUnrelatedLongTransactionNeverHoldsDelivery(Pin pin) throws Exception {
        String stream = "unrelated_" + pin.name().toLowerCase();
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build();
             Held held = hold(pin)) {
            sluice.stream(stream).register();
            Producer<String> producer = sluice.stream(stream, String.class).producer();
            producer.produce("before the group");
            ConsumerGroup<String> group = sluice.stream(stream, String.class).consumerGroup("g");
            // Registration at the head observes the fence too (it used to wait 30 s and fail).
            group.register(GroupConfig.builder().start(StartPosition.head()).build());

            Map<String, Long> committedAt = new ConcurrentHashMap<>();
            Map<String, Long> deliveredAt = new ConcurrentHashMap<>();
            try (Consumption c = group.consume(m -> {
                deliveredAt.putIfAbsent(m.payload(), System.nanoTime());
                return Outcome.success();
            }, ConsumeOptions.defaults().withPollInterval(Duration.ofMillis(200)))) {
                // Produced 20 at a time (the producer commits what is waiting together), each stamped when its
                // commit is confirmed.
                long lastId = 0;
                for (int i = 0; i < MESSAGES; i += 20) {
                    List<CompletableFuture<Produced>> wave = new ArrayList<>();
                    for (int j = i; j < i + 20; j++) {
                        String payload = "m" + j;
                        wave.add(producer.produceAsync(payload, ProduceOptions.NONE)
                                .whenComplete((p, e) -> committedAt.put(payload, System.nanoTime())));
                    }
                    for (CompletableFuture<Produced> f : wave) {
                        lastId = Math.max(lastId, f.get(30, TimeUnit.SECONDS).id());
                    }
                }
                await().atMost(Duration.ofSeconds(30))
                        .untilAsserted(() -> assertThat(deliveredAt.keySet()).containsAll(committedAt.keySet()));
                assertThat(deliveredAt).doesNotContainKey("before the group").hasSize(MESSAGES);
                long worst = committedAt.entrySet().stream()
                        .mapToLong(e -> deliveredAt.get(e.getKey()) - e.getValue()).max().orElseThrow();
                assertThat(Duration.ofNanos(worst)).as("slowest delivery after its commit").isLessThanOrEqualTo(WITHIN);

                List<StoredMessage> read = sluice.stream(stream).read(lastId - 1, 10, Duration.ofSeconds(2));
                assertThat(read).extracting(StoredMessage::id).containsExactly(lastId);
            }
            assertThat(held.stillOpen()).as("the unrelated transaction stayed open throughout").isTrue();
        }
    }
}
