package dev.sluice.produce;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.AmbientTransaction;
import dev.sluice.EnqueueOptions;
import dev.sluice.ErrorCode;
import dev.sluice.NewJob;
import dev.sluice.Outgoing;
import dev.sluice.ProduceOptions;
import dev.sluice.Produced;
import dev.sluice.Producer;
import dev.sluice.Queue;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Producing and enqueuing join the caller's transaction found by an {@link AmbientTransaction}: the message or job
 * commits or rolls back with the business write, idempotency and unique keys included; outside one, they run in
 * transactions of their own. The ambient here is a thread-local connection with an after-commit list, as a
 * transaction manager keeps one.
 */
@SluiceTest
class AmbientTransactionTest {
    /** The calling thread's open transaction: what Spring's TransactionSynchronizationManager holds. */
    static final ThreadLocal<Tx> CURRENT = new ThreadLocal<>();
    static Sluice sluice;
    static SimpleMeterRegistry registry;
    static Rows rows;
    static String q;

    record Tx(Connection connection, List<Runnable> afterCommit) {
    }

    @BeforeAll
    static void setUp(TestDatabase db) {
        registry = new SimpleMeterRegistry();
        sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).meterRegistry(registry)
                .meterRefresh(Duration.ofHours(1)).ambientTransaction(() -> {
                    Tx tx = CURRENT.get();
                    return tx == null ? null : AmbientTransaction.joined(tx.connection(), tx.afterCommit()::add);
                }).build();
        rows = new Rows(db);
        q = "\"" + db.schema() + "\"";
        sluice.system().register();
        db.execute("CREATE TABLE " + q + ".orders (id text PRIMARY KEY)");
    }

    @AfterAll
    static void tearDown() {
        sluice.close();
    }

    /** Runs {@code work} in a transaction on its own connection, bound to this thread; commits or rolls back. */
    static void inTransaction(TestDatabase db, boolean commit, SqlWork work) throws Exception {
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            Tx tx = new Tx(c, new ArrayList<>());
            CURRENT.set(tx);
            try {
                work.run(c);
            } finally {
                CURRENT.remove();
            }
            if (commit) {
                c.commit();
                tx.afterCommit().forEach(Runnable::run);
            } else {
                c.rollback();
            }
        }
    }

    interface SqlWork {
        void run(Connection c) throws Exception;
    }

    static void insertOrder(Connection c, String id) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + q + ".orders VALUES (?)")) {
            ps.setString(1, id);
            ps.executeUpdate();
        }
    }

    private double produced(String stream) {
        return registry.get("sluice.produce.messages").tags("stream", stream).counter().count();
    }

    @Test
    void aCommitKeepsTheMessageWithTheBusinessWriteAndARollbackLeavesNeitherNorTheIdempotencyKey(TestDatabase db)
            throws Exception {
        long id = sluice.stream("ambient-orders").register().id();
        try (Producer<String> p = sluice.stream("ambient-orders", String.class).producer()) {
            inTransaction(db, false, c -> {
                insertOrder(c, "o-rolled-back");
                Produced gone = p.produce("rolled back", ProduceOptions.idempotent("order-1"));
                assertThat(gone.duplicate()).isFalse();
            });
            assertThat(rows.count(id)).as("a rollback leaves no message").isZero();
            assertThat(produced("ambient-orders")).as("nothing counted without a commit").isZero();

            List<Produced> kept = new ArrayList<>();
            inTransaction(db, true, c -> {
                insertOrder(c, "o-1");
                kept.add(p.produce("committed", ProduceOptions.idempotent("order-1")));
                assertThat(rows.count(id)).as("invisible to others before the commit").isZero();
            });
            assertThat(kept.get(0).duplicate()).as("the rolled-back idempotency key was not kept").isFalse();
            assertThat(rows.log(id)).containsOnlyKeys(kept.get(0).id());
            assertThat(produced("ambient-orders")).as("counted after the commit").isEqualTo(1.0);

            // outside a transaction the producer is as before; the committed key now answers as a duplicate
            Produced again = p.produce("again", ProduceOptions.idempotent("order-1"));
            assertThat(again.duplicate()).isTrue();
            assertThat(again.id()).isEqualTo(kept.get(0).id());
        }
        assertThat(rows.strings("SELECT id FROM " + q + ".orders")).containsExactly("o-1");
    }

    @Test
    void everyProduceFormJoinsTheTransaction(TestDatabase db) throws Exception {
        long id = sluice.stream("ambient-forms").register().id();
        try (Producer<String> p = sluice.stream("ambient-forms", String.class).producer()) {
            inTransaction(db, false, c -> {
                p.produce("one");
                assertThat(p.produceAsync("two", ProduceOptions.NONE)).as("complete on return").isDone();
                p.produceBatch(List.of(Outgoing.of("three"), Outgoing.of("four")));
                p.produce(conn -> {
                    assertThat(conn).as("the work gets the caller's connection").isSameAs(c);
                    return "five";
                }, ProduceOptions.NONE);
            });
            assertThat(rows.count(id)).isZero();

            inTransaction(db, true, c -> {
                p.produce("one");
                p.produceAsync("two", ProduceOptions.NONE).join();
                p.produceBatch(List.of(Outgoing.of("three"), Outgoing.of("four")));
                p.produce(conn -> "five", ProduceOptions.NONE);
            });
            assertThat(rows.count(id)).isEqualTo(5);
            assertThat(produced("ambient-forms")).isEqualTo(5.0);
        }
    }

    @Test
    void anAutoCommitConnectionIsRefusedAndNothingIsWritten(TestDatabase db) throws Exception {
        long id = sluice.stream("ambient-autocommit").register().id();
        try (Producer<String> p = sluice.stream("ambient-autocommit", String.class).producer();
             Connection c = db.connect()) {
            CURRENT.set(new Tx(c, new ArrayList<>()));
            try {
                assertThatThrownBy(() -> p.produce("x")).isInstanceOfSatisfying(SluiceException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_OPTIONS));
                assertThatThrownBy(() -> sluice.queue("ambient-autocommit", String.class).enqueue("x"))
                        .isInstanceOfSatisfying(SluiceException.class,
                                e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_QUEUE_OPTIONS));
            } finally {
                CURRENT.remove();
            }
        }
        assertThat(rows.count(id)).isZero();
    }

    @Test
    void jobsCommitAndRollBackWithTheCallerAndARolledBackUniqueKeyIsFree(TestDatabase db) throws Exception {
        Queue<String> emails = sluice.queue("ambient-emails", String.class);
        inTransaction(db, false, c -> {
            insertOrder(c, "j-rolled-back");
            emails.enqueue("welcome", EnqueueOptions.unique("user-1"));
            emails.enqueueBatch(List.of(NewJob.of("a"), NewJob.of("b")));
        });
        assertThat(emails.stats().pending()).as("a rollback leaves no job").isZero();

        List<Long> ids = new ArrayList<>();
        inTransaction(db, true, c -> {
            insertOrder(c, "j-1");
            ids.add(emails.enqueue("welcome", EnqueueOptions.unique("user-1")));
            ids.addAll(emails.enqueueBatch(List.of(NewJob.of("a"), NewJob.of("b"))));
        });
        assertThat(emails.stats().pending()).isEqualTo(3);
        assertThat(emails.enqueue("welcome again", EnqueueOptions.unique("user-1")))
                .as("the committed unique key holds").isEqualTo(ids.get(0));
        assertThat(emails.stats().pending()).isEqualTo(3);
    }

    @Test
    void withoutATransactionOnTheThreadEverythingRunsOnItsOwn(TestDatabase db) throws Exception {
        long id = sluice.stream("ambient-none").register().id();
        try (Producer<String> p = sluice.stream("ambient-none", String.class).producer()) {
            p.produce("alone");
            p.produceAsync("async", ProduceOptions.NONE).join();
            assertThat(rows.count(id)).isEqualTo(2);
        }
        long job = sluice.queue("ambient-none", String.class).enqueue("alone");
        assertThat(sluice.queue("ambient-none", String.class).job(job)).isPresent();
    }
}
