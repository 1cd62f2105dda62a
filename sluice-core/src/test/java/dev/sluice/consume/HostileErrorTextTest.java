package dev.sluice.consume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import dev.sluice.ConsumeOptions;
import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.DeadLetter;
import dev.sluice.DeliveryLogMode;
import dev.sluice.GroupConfig;
import dev.sluice.Outcome;
import dev.sluice.RetryPolicy;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Failure text is hostile (a handler may echo payload bytes into it): a NUL made the outcome write fail
 * (SQLState 22021) and the message ran again forever. Now the text is stored cleaned, and the outcome
 * happens as the handler said, on the range path (first delivery) and the row path (later ones).
 */
@SluiceTest
class HostileErrorTextTest {
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

    record Event(int attempt, String status, String error) {
    }

    @Test
    void aTerminalReasonWithANulAndALoneSurrogateIsStoredCleanedAndDeadAtOnce(TestDatabase db) {
        long sid = sluice.stream("nul-terminal").register().id();
        ConsumerGroup<String> group = sluice.stream("nul-terminal", String.class).consumerGroup("g");
        long gid = group.register(GroupConfig.builder().deliveryLogMode(DeliveryLogMode.FAILURES).build()).id();
        long id = sluice.stream("nul-terminal", String.class).producer().produce("x").id();
        AtomicInteger calls = new AtomicInteger();
        try (Consumption c = group.consume(m -> {
            calls.incrementAndGet();
            return Outcome.terminal("bad byte \u0000 and \uD800 here\u001b[2J");
        }, FAST)) {
            await().atMost(Duration.ofSeconds(20)).until(() -> group.get().orElseThrow().dead() == 1);
            assertThat(c.stats().dead()).isEqualTo(1);
        }
        assertThat(calls).hasValue(1);
        DeadLetter d = group.admin().deadLetters(null, 10).items().get(0);
        assertThat(d.messageId()).isEqualTo(id);
        assertThat(d.attempts()).isEqualTo(1);
        assertThat(d.lastError()).isEqualTo("bad byte \uFFFD and \uFFFD here\uFFFD[2J");
        assertThat(events(db, sid, gid)).extracting(Event::attempt, Event::status, Event::error)
                .containsExactly(tuple(1, "dead", d.lastError()));
    }

    @Test
    void anExceptionWithANulRetriesThenDiesAfterMaxAttemptsWithItsTextAndStackCleaned(TestDatabase db) {
        long sid = sluice.stream("nul-thrown").register().id();
        ConsumerGroup<String> group = sluice.stream("nul-thrown", String.class).consumerGroup("g");
        long gid = group.register(GroupConfig.builder().deliveryLogMode(DeliveryLogMode.FAILURES)
                .retry(RetryPolicy.DEFAULT.withMaxAttempts(2).withBackoff(Duration.ofMillis(10), 2.0, Duration.ofMillis(10)))
                .build()).id();
        sluice.stream("nul-thrown", String.class).producer().produce("x");
        List<Integer> attempts = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (Consumption c = group.consume(m -> {
            attempts.add(m.attempt());
            throw new IllegalStateException("payload said \u0000 on attempt " + m.attempt(),
                    new RuntimeException("cause \u0000"));
        }, FAST)) {
            await().atMost(Duration.ofSeconds(20)).until(() -> group.get().orElseThrow().dead() == 1);
        }
        assertThat(attempts).containsExactly(1, 2);
        DeadLetter d = group.admin().deadLetters(null, 10).items().get(0);
        assertThat(d.attempts()).isEqualTo(2);
        assertThat(d.lastError()).isEqualTo("java.lang.IllegalStateException: payload said \uFFFD on attempt 2");
        assertThat(d.errorStack()).contains("payload said \uFFFD on attempt 2").contains("cause \uFFFD")
                .contains("HostileErrorTextTest").doesNotContain("\u0000");
        assertThat(events(db, sid, gid)).extracting(Event::attempt, Event::status, Event::error).containsExactly(
                tuple(1, "failed", "java.lang.IllegalStateException: payload said \uFFFD on attempt 1"),
                tuple(2, "dead", d.lastError()));
    }

    @Test
    void aLongReasonIsCutToTheOneLimit(TestDatabase db) {
        sluice.stream("long-reason").register();
        ConsumerGroup<String> group = sluice.stream("long-reason", String.class).consumerGroup("g");
        group.register();
        sluice.stream("long-reason", String.class).producer().produce("x");
        try (Consumption c = group.consume(m -> Outcome.terminal("x".repeat(100_000)), FAST)) {
            await().atMost(Duration.ofSeconds(20)).until(() -> group.get().orElseThrow().dead() == 1);
        }
        String stored = group.admin().deadLetters(null, 10).items().get(0).lastError();
        assertThat(stored).hasSize(dev.sluice.internal.jdbc.ErrorText.MAX_CHARS).endsWith("x…");
    }

    private static List<Event> events(TestDatabase db, long sid, long gid) {
        List<Event> out = new ArrayList<>();
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement("SELECT attempt, status, error FROM \""
                + db.schema() + "\".delivery_log_" + sid + " WHERE consumer_group_id = ? ORDER BY id")) {
            ps.setLong(1, gid);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new Event(rs.getInt(1), rs.getString(2), rs.getString(3)));
                }
            }
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
        return out;
    }
}
