package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Produced;
import dev.sluice.ProduceOptions;
import dev.sluice.Producer;
import dev.sluice.Queue;
import dev.sluice.Sluice;
import dev.sluice.StoredMessage;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The transactional outbox: inside a Spring-managed transaction, produce and enqueue commit or roll back with the
 * business row; outside one they commit on their own as before.
 */
@SpringBootTest(classes = OutboxTest.App.class, properties = "sluice.maintenance.enabled=false")
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class OutboxTest {
    static String schema;

    @DynamicPropertySource
    static void db(DynamicPropertyRegistry registry) {
        schema = TestDb.register(registry, "outbox");
    }

    /** A business service writing a row, a message and a job in one {@code @Transactional} method. */
    static class OrderService {
        final JdbcTemplate jdbc;
        final Producer<String> events;
        final Sluice sluice;

        OrderService(JdbcTemplate jdbc, Sluice sluice) {
            this.jdbc = jdbc;
            this.events = sluice.stream("order-events", String.class).producer();
            this.sluice = sluice;
        }

        @Transactional
        public Produced place(String id, boolean fail) {
            jdbc.update("INSERT INTO \"" + schema + "\".orders (id) VALUES (?)", id);
            Produced p = events.produce("created " + id, ProduceOptions.idempotent("order-" + id));
            mails(sluice, id).enqueue("mail for " + id);
            if (fail) {
                throw new IllegalStateException("payment declined for " + id);
            }
            return p;
        }

        /** No transaction: each call commits on its own. */
        public Produced placeWithoutTransaction(String id) {
            Produced p = events.produce("created " + id, ProduceOptions.idempotent("order-" + id));
            mails(sluice, id).enqueue("mail for " + id);
            throw new IllegalStateException("fails after producing " + p.id());
        }
    }

    /** One queue per order, so a test counts its jobs without reading payloads (operator reads leave them out). */
    static Queue<String> mails(Sluice sluice, String id) {
        return sluice.queue("mail-" + id, String.class);
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @Bean
        OrderService orderService(JdbcTemplate jdbc, Sluice sluice) {
            return new OrderService(jdbc, sluice);
        }
    }

    @Autowired
    Sluice sluice;
    @Autowired
    OrderService service;
    @Autowired
    JdbcTemplate jdbc;
    @Autowired
    TransactionTemplate tx;

    @BeforeEach
    void tables() {
        sluice.system().register();
        sluice.stream("order-events").register();
        jdbc.execute("CREATE TABLE IF NOT EXISTS \"" + schema + "\".orders (id text PRIMARY KEY)");
    }

    private List<String> events() {
        return sluice.stream("order-events").read(0, 1000, Duration.ofSeconds(5)).stream()
                .map(m -> new String(m.payload(), java.nio.charset.StandardCharsets.UTF_8)).toList();
    }

    private boolean order(String id) {
        return jdbc.queryForObject("SELECT count(*) FROM \"" + schema + "\".orders WHERE id = ?", Long.class, id) == 1;
    }

    private long emailsFor(String id) {
        return mails(sluice, id).admin().stats().pending();
    }

    @Test
    void aCommittedTransactionKeepsTheRowTheMessageAndTheJob() {
        Produced p = service.place("a1", false);
        assertThat(p.duplicate()).isFalse();
        assertThat(order("a1")).isTrue();
        assertThat(events()).contains("created a1");
        assertThat(emailsFor("a1")).isEqualTo(1);
    }

    @Test
    void aRolledBackTransactionLeavesNoRowNoMessageNoJobAndNoIdempotencyKey() {
        assertThatThrownBy(() -> service.place("r1", true)).hasMessageContaining("payment declined");
        assertThat(order("r1")).isFalse();
        assertThat(events()).doesNotContain("created r1");
        assertThat(emailsFor("r1")).isZero();
        // The key went with the rollback: the same key produces a new message now.
        Produced again = sluice.stream("order-events", String.class).producer()
                .produce("created r1", ProduceOptions.idempotent("order-r1"));
        assertThat(again.duplicate()).isFalse();
        assertThat(events()).containsOnlyOnce("created r1");
    }

    @Test
    void outsideATransactionProduceAndEnqueueCommitOnTheirOwn() {
        assertThatThrownBy(() -> service.placeWithoutTransaction("n1")).hasMessageContaining("fails after producing");
        assertThat(events()).contains("created n1");
        assertThat(emailsFor("n1")).isEqualTo(1);
    }

    @Test
    void aTransactionTemplateJoinsToo() {
        Producer<String> producer = sluice.stream("order-events", String.class).producer();
        tx.executeWithoutResult(status -> {
            jdbc.update("INSERT INTO \"" + schema + "\".orders (id) VALUES (?)", "t1");
            producer.produce("created t1");
        });
        assertThat(order("t1")).isTrue();
        assertThat(events()).contains("created t1");

        tx.executeWithoutResult(status -> {
            jdbc.update("INSERT INTO \"" + schema + "\".orders (id) VALUES (?)", "t2");
            producer.produce("created t2");
            mails(sluice, "t2").enqueue("mail for t2");
            status.setRollbackOnly();
        });
        assertThat(order("t2")).isFalse();
        assertThat(events()).doesNotContain("created t2");
        assertThat(emailsFor("t2")).isZero();
    }

    @Test
    void theMessageIsInvisibleUntilTheCommit() {
        Producer<String> producer = sluice.stream("order-events", String.class).producer();
        tx.executeWithoutResult(status -> {
            producer.produce("created v1");
            // Another connection (the client's own) does not see it yet.
            List<StoredMessage> seen = sluice.stream("order-events").read(0, 1000, Duration.ZERO);
            assertThat(seen).noneMatch(m -> new String(m.payload(), java.nio.charset.StandardCharsets.UTF_8).equals("created v1"));
        });
        assertThat(events()).contains("created v1");
    }

    @Test
    void aTransactionOfAnotherDataSourceIsNotJoined() {
        org.springframework.jdbc.datasource.DriverManagerDataSource other =
                new org.springframework.jdbc.datasource.DriverManagerDataSource(TestDb.url());
        TransactionTemplate otherTx = new TransactionTemplate(
                new org.springframework.jdbc.datasource.DataSourceTransactionManager(other));
        Producer<String> producer = sluice.stream("order-events", String.class).producer();
        otherTx.executeWithoutResult(status -> {
            producer.produce("created x1");
            status.setRollbackOnly();
        });
        // Not that transaction's to roll back: the message committed on its own.
        assertThat(events()).contains("created x1");
    }
}
