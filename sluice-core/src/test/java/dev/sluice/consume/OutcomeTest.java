package dev.sluice.consume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.ConsumeOptions;
import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.DeadLetter;
import dev.sluice.DeliveryLogMode;
import dev.sluice.GroupConfig;
import dev.sluice.Outcome;
import dev.sluice.Page;
import dev.sluice.ProduceOptions;
import dev.sluice.Producer;
import dev.sluice.RetryPolicy;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

@SluiceTest
class OutcomeTest {
    static Sluice sluice;
    static final ConsumeOptions FAST = ConsumeOptions.defaults().withPollInterval(Duration.ofMillis(20))
            .withIdleCheck(Duration.ofMillis(200));

    @BeforeAll
    static void setUp(TestDatabase db) {
        sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build();
    }

    @AfterAll
    static void tearDown() {
        sluice.close();
    }

    record Attempt(int attempt, int delays, Instant at) {
    }

    @Test
    void backoffDoublesUpToItsCapAndMaxAttemptsMakesADeadLetterWithTheError(TestDatabase db) {
        sluice.stream("backoff").register();
        ConsumerGroup<String> group = sluice.stream("backoff", String.class).consumerGroup("g");
        group.register(GroupConfig.builder().retry(RetryPolicy.DEFAULT.withMaxAttempts(5)
                .withBackoff(Duration.ofMillis(200), 2.0, Duration.ofMillis(500)).withJitter(0)).build());
        long id = sluice.stream("backoff", String.class).producer().produce("always fails").id();
        List<Attempt> attempts = new CopyOnWriteArrayList<>();
        try (Consumption c = group.consume(m -> {
            attempts.add(new Attempt(m.attempt(), m.delays(), Instant.now()));
            throw new IllegalStateException("boom " + m.attempt());
        }, FAST)) {
            await().atMost(Duration.ofSeconds(30)).until(() -> group.get().orElseThrow().dead() == 1);
            assertThat(c.stats().dead()).isEqualTo(1);
            assertThat(c.stats().retried()).isEqualTo(4);
        }
        assertThat(attempts).extracting(Attempt::attempt).containsExactly(1, 2, 3, 4, 5);
        // Waits: 200, 400, 500 (capped), 500 ms — each at least the backoff, and the cap holds.
        long[] minimum = {200, 400, 500, 500};
        for (int i = 1; i < attempts.size(); i++) {
            long gap = Duration.between(attempts.get(i - 1).at(), attempts.get(i).at()).toMillis();
            assertThat(gap).as("wait before attempt %d", i + 1).isGreaterThanOrEqualTo(minimum[i - 1] - 20).isLessThan(minimum[i - 1] + 3_000);
        }
        Page<DeadLetter> dead = group.admin().deadLetters(null, 10);
        assertThat(dead.items()).singleElement().satisfies(d -> {
            assertThat(d.messageId()).isEqualTo(id);
            assertThat(d.attempts()).isEqualTo(5);
            assertThat(d.lastError()).contains("boom 5");
            assertThat(d.errorStack()).contains("IllegalStateException").contains("OutcomeTest");
            assertThat(d.deadAt()).isNotNull();
        });
        assertThat(RetryPolicy.DEFAULT.backoff(1)).isEqualTo(Duration.ofSeconds(1));
        assertThat(RetryPolicy.DEFAULT.backoff(3)).isEqualTo(Duration.ofSeconds(4));
        assertThat(RetryPolicy.DEFAULT.backoff(30)).isEqualTo(Duration.ofMinutes(5));
    }

    @Test
    void terminalIsDeadAtOnceAndRedriveBringsItBackToSucceed() {
        sluice.stream("terminal").register();
        ConsumerGroup<String> group = sluice.stream("terminal", String.class).consumerGroup("g");
        group.register();
        Producer<String> p = sluice.stream("terminal", String.class).producer();
        for (int i = 0; i < 5; i++) {
            p.produce("t" + i);
        }
        AtomicBoolean healed = new AtomicBoolean();
        Map<String, List<Integer>> seen = new ConcurrentHashMap<>();
        try (Consumption c = group.consume(m -> {
            seen.computeIfAbsent(m.payload(), k -> new CopyOnWriteArrayList<>()).add(m.attempt());
            return healed.get() || !m.payload().equals("t2") ? Outcome.success() : Outcome.terminal("bad data in t2");
        }, FAST)) {
            await().atMost(Duration.ofSeconds(20)).until(() -> group.get().orElseThrow().dead() == 1);
            assertThat(seen.get("t2")).containsExactly(1);
            assertThat(group.admin().deadLetters(null, 10).items().get(0).lastError()).isEqualTo("bad data in t2");
            healed.set(true);
            assertThat(group.admin().redriveAll()).isEqualTo(1);
            await().atMost(Duration.ofSeconds(20)).until(() -> seen.get("t2").size() == 2);
            await().atMost(Duration.ofSeconds(20)).until(() -> group.get().orElseThrow().dead() == 0
                    && group.get().orElseThrow().ready() == 0);
            assertThat(seen.get("t2")).containsExactly(1, 1); // attempts reset by the redrive
        }
    }

    @Test
    void delaysAreCountedApartFromAttempts() {
        sluice.stream("delays").register();
        ConsumerGroup<String> group = sluice.stream("delays", String.class).consumerGroup("g");
        group.register();
        sluice.stream("delays", String.class).producer().produce("later");
        List<Attempt> seen = new CopyOnWriteArrayList<>();
        try (Consumption c = group.consume(m -> {
            seen.add(new Attempt(m.attempt(), m.delays(), Instant.now()));
            if (m.delays() < 2) {
                return Outcome.delay(Duration.ofMillis(300));
            }
            if (m.attempt() == 1) {
                throw new RuntimeException("then one failure");
            }
            return Outcome.success();
        }, FAST)) {
            await().atMost(Duration.ofSeconds(30)).until(() -> c.stats().succeeded() == 1);
            assertThat(c.stats().delayed()).isEqualTo(2);
        }
        assertThat(seen).extracting(a -> a.attempt() + "/" + a.delays()).containsExactly("1/0", "1/1", "1/2", "2/2");
        assertThat(Duration.between(seen.get(0).at(), seen.get(1).at()).toMillis()).isGreaterThanOrEqualTo(280);
    }

    @Test
    void scheduledMessagesWaitForDeliverAt() {
        sluice.stream("scheduled").register();
        ConsumerGroup<String> group = sluice.stream("scheduled", String.class).consumerGroup("g");
        group.register();
        Instant at = Instant.now().plusMillis(1500);
        sluice.stream("scheduled", String.class).producer().produce("at", ProduceOptions.builder().deliverAt(at).build());
        sluice.stream("scheduled", String.class).producer().produce("now");
        List<String> order = new CopyOnWriteArrayList<>();
        List<Instant> times = new ArrayList<>();
        try (Consumption c = group.consume(m -> {
            order.add(m.payload());
            synchronized (times) {
                times.add(Instant.now());
            }
            return Outcome.success();
        }, FAST)) {
            await().atMost(Duration.ofSeconds(20)).until(() -> order.size() == 2);
        }
        assertThat(order).containsExactly("now", "at");
        assertThat(times.get(1)).isAfterOrEqualTo(at.minusMillis(50));
    }

    @Test
    void deliveryLogRecordsFailuresByDefaultAndEverythingInModeAll(TestDatabase db) {
        long sid = sluice.stream("audit").register().id();
        ConsumerGroup<String> failuresOnly = sluice.stream("audit", String.class).consumerGroup("failures");
        ConsumerGroup<String> all = sluice.stream("audit", String.class).consumerGroup("all");
        long gf = failuresOnly.register(GroupConfig.builder().retry(RetryPolicy.DEFAULT.withMaxAttempts(2)
                .withBackoff(Duration.ofMillis(50), 1, Duration.ofMillis(50))).build()).id();
        long ga = all.register(GroupConfig.builder().deliveryLogMode(DeliveryLogMode.ALL).build()).id();
        Producer<String> p = sluice.stream("audit", String.class).producer();
        p.produce("ok");
        p.produce("bad");
        try (Consumption a = failuresOnly.consume(m -> m.payload().equals("bad") ? Outcome.retry() : Outcome.success(), FAST);
             Consumption b = all.consume(m -> Outcome.success(), FAST)) {
            await().atMost(Duration.ofSeconds(20)).until(() -> failuresOnly.get().orElseThrow().dead() == 1
                    && b.stats().succeeded() == 2);
        }
        String q = "\"" + db.schema() + "\".delivery_log_" + sid;
        assertThat(ConsumeFixture.strings(db, "SELECT attempt || ':' || status FROM " + q + " WHERE consumer_group_id = ? ORDER BY id", gf))
                .containsExactly("1:failed", "2:dead");
        assertThat(ConsumeFixture.strings(db, "SELECT status FROM " + q + " WHERE consumer_group_id = ? ORDER BY id", ga))
                .containsExactly("success", "success");
    }
}
