package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.DeadLetter;
import dev.sluice.JobHandle;
import dev.sluice.Message;
import dev.sluice.Outcome;
import dev.sluice.ProduceOptions;
import dev.sluice.Sluice;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.annotation.Transactional;

/** Annotated listeners and jobs receive, retry, dead-letter and resolve placeholders. */
@SpringBootTest(classes = ListenerTest.App.class, properties = {"test.stream=orders", "test.group=audit"})
// Closed after the class, while the JVM's embedded server still runs (not by the JVM's shutdown hooks, in a race).
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class ListenerTest {
    @DynamicPropertySource
    static void db(DynamicPropertyRegistry registry) {
        TestDb.register(registry, "listener");
    }

    /** An order as the tests produce it (JSON-mapped). */
    record Order(String id, int amount) {
    }

    /** The beans under test: what each listener saw. */
    static class Listeners {
        final List<Order> payloads = new CopyOnWriteArrayList<>();
        final List<Message<Order>> messages = new CopyOnWriteArrayList<>();
        final List<String> both = new CopyOnWriteArrayList<>();
        final Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();
        final List<String> flakyDone = new CopyOnWriteArrayList<>();
        final List<String> jobs = new CopyOnWriteArrayList<>();
        final List<Integer> jobAttempts = new CopyOnWriteArrayList<>();

        @SluiceListener(stream = "orders", group = "payload-only")
        void onPayload(Order order) {
            payloads.add(order);
        }

        @SluiceListener(stream = "${test.stream}", group = "${test.group}")
        Outcome onMessage(Message<Order> message) {
            messages.add(message);
            return Outcome.success();
        }

        @SluiceListener(stream = "orders", group = "both", concurrencyPolicy = "exclusive", start = "beginning")
        void onBoth(Order order, Message<Order> message) {
            both.add(order.id() + "@" + message.id());
        }

        /** Fails twice, then succeeds: throwing is a retry after the group's (short) backoff. */
        @SluiceListener(stream = "flaky", group = "retry", maxAttempts = "5", initialBackoff = "10ms", maxBackoff = "50ms")
        void flaky(String text) {
            if (attempts.computeIfAbsent(text, k -> new AtomicInteger()).incrementAndGet() < 3) {
                throw new IllegalStateException("not yet");
            }
            flakyDone.add(text);
        }

        @SluiceListener(stream = "poison", group = "dlq")
        Outcome poison(String text) {
            return Outcome.terminal("cannot handle " + text);
        }

        @SluiceJob(queue = "emails", concurrency = "2")
        void email(String to, JobHandle<String> job) {
            jobs.add(to);
            jobAttempts.add(job.attempt());
        }
    }

    /**
     * A {@code @Transactional} listener (a CGLIB proxy): what it produces joins its transaction, so the failed first
     * attempt's message rolls back and only the retry's is kept.
     */
    static class Relay {
        final Sluice sluice;
        final AtomicInteger calls = new AtomicInteger();

        Relay(Sluice sluice) {
            this.sluice = sluice;
        }

        /** Through a method: the test holds the proxy, whose own fields are empty. */
        public int calls() {
            return calls.get();
        }

        @Transactional
        @SluiceListener(stream = "relay-in", group = "relay", initialBackoff = "10ms", maxBackoff = "50ms")
        public void relay(String text) {
            sluice.stream("relay-out", String.class).producer().produce("relayed " + text);
            if (calls.incrementAndGet() == 1) {
                throw new IllegalStateException("the first attempt fails after producing");
            }
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @Bean
        Listeners listeners() {
            return new Listeners();
        }

        @Bean
        Relay relay(Sluice sluice) {
            return new Relay(sluice);
        }
    }

    @Autowired
    Sluice sluice;
    @Autowired
    Listeners listeners;
    @Autowired
    Relay relay;

    @Test
    void everyShapeOfListenerReceivesTheMessage() {
        long id = sluice.stream("orders", Order.class).producer().produce(new Order("o-1", 42), ProduceOptions.key("o-1")).id();
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            assertThat(listeners.payloads).contains(new Order("o-1", 42));
            assertThat(listeners.messages).anySatisfy(m -> {
                assertThat(m.id()).isEqualTo(id);
                assertThat(m.payload()).isEqualTo(new Order("o-1", 42));
                assertThat(m.messageKey()).isEqualTo("o-1");
            });
            assertThat(listeners.both).contains("o-1@" + id);
        });
        // The placeholders named the group: it is registered as "audit" on "orders".
        assertThat(sluice.stream("orders").consumerGroup("audit").get()).isPresent();
        assertThat(sluice.stream("orders").consumerGroup("both").get().orElseThrow().config().concurrency().sqlValue())
                .isEqualTo("exclusive");
    }

    @Test
    void aThrowingListenerIsRetriedThenSucceeds() {
        sluice.stream("flaky", String.class).producer().produce("hello");
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(listeners.flakyDone).containsExactly("hello"));
        assertThat(listeners.attempts.get("hello")).hasValue(3);
        assertThat(sluice.stream("flaky").consumerGroup("retry").get().orElseThrow().config().retry().maxAttempts()).isEqualTo(5);
    }

    @Test
    void aTerminalOutcomeDeadLettersTheMessage() {
        long id = sluice.stream("poison", String.class).producer().produce("bad").id();
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            List<DeadLetter> dead = sluice.stream("poison").consumerGroup("dlq").admin().deadLetters(null, 10).items();
            assertThat(dead).singleElement().satisfies(d -> {
                assertThat(d.messageId()).isEqualTo(id);
                assertThat(d.lastError()).contains("cannot handle bad");
            });
        });
    }

    @Test
    void aJobMethodWorksTheQueue() {
        sluice.queue("emails", String.class).enqueue("ada@example.com");
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(listeners.jobs).containsExactly("ada@example.com"));
        assertThat(listeners.jobAttempts).containsExactly(1);
    }

    @Test
    void aTransactionalListenerIsCalledThroughItsProxyAndWhatItProducesJoinsItsTransaction() {
        assertThat(org.springframework.aop.support.AopUtils.isAopProxy(relay)).isTrue();
        sluice.stream("relay-out").register();
        sluice.stream("relay-in", String.class).producer().produce("x");
        await().atMost(Duration.ofSeconds(20)).until(() -> relay.calls() >= 2);
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(sluice.stream("relay-out")
                .read(0, 100, Duration.ofSeconds(5)).stream().map(m -> new String(m.payload(), java.nio.charset.StandardCharsets.UTF_8)))
                .containsExactly("relayed x"));
    }
}
