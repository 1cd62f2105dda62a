package dev.sluice.consume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.sluice.BindingPattern;
import dev.sluice.ConsumeOptions;
import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.ErrorCode;
import dev.sluice.GroupConfig;
import dev.sluice.Outcome;
import dev.sluice.ProduceOptions;
import dev.sluice.Producer;
import dev.sluice.SchemaVersion;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

@SluiceTest
class RoutingAndSkipsTest {
    static Sluice sluice;
    static final ConsumeOptions OPTS = ConsumeOptions.defaults().withPollInterval(Duration.ofMillis(20))
            .withIdleCheck(Duration.ofMillis(200));

    public record V1(String v) {
    }

    @SchemaVersion(2)
    public record V2(String v) {
    }

    @BeforeAll
    static void setUp(TestDatabase db) {
        sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build();
    }

    @AfterAll
    static void tearDown() {
        sluice.close();
    }

    static ProduceOptions routed(String key) {
        return ProduceOptions.builder().routingKey(key).build();
    }

    @Test
    void patternsMatchAnchoredWithStarAndQuestionMark() {
        assertThat(BindingPattern.matches("orders.*", "orders.eu.created")).isTrue();
        assertThat(BindingPattern.matches("orders.*", "orders")).isFalse();
        assertThat(BindingPattern.matches("*.created", "orders.eu.created")).isTrue();
        assertThat(BindingPattern.matches("orders.?u", "orders.eu")).isTrue();
        assertThat(BindingPattern.matches("orders.?u", "orders.emu")).isFalse();
        assertThat(BindingPattern.matches("a.b", "aXb")).as("dots are literal").isFalse();
        assertThat(BindingPattern.matches("x", "xx")).as("anchored").isFalse();
        assertThat(BindingPattern.matches("(a|b)+[c]", "(a|b)+[c]")).as("regex characters are literal").isTrue();
        assertThat(BindingPattern.matches("anything", null)).isFalse();
        for (String bad : new String[] {"", "has space", "tab\tpattern", "x".repeat(257)}) {
            assertThatThrownBy(() -> GroupConfig.builder().bindings(bad).build())
                    .isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_BINDING));
        }
    }

    @Test
    void bindingsFilterCountUnmatchedAndChangeOnlyForward() {
        sluice.stream("routing").register();
        ConsumerGroup<String> eu = sluice.stream("routing", String.class).consumerGroup("eu");
        ConsumerGroup<String> all = sluice.stream("routing", String.class).consumerGroup("all");
        eu.register(GroupConfig.builder().bindings("eu.*").build());
        all.register();
        Producer<String> p = sluice.stream("routing", String.class).producer();
        p.produce("eu-1", routed("eu.orders"));
        p.produce("us-1", routed("us.orders"));
        p.produce("none-1");
        List<String> euSeen = new CopyOnWriteArrayList<>();
        List<String> allSeen = new CopyOnWriteArrayList<>();
        try (Consumption e = eu.consume(m -> {
            euSeen.add(m.payload());
            return Outcome.success();
        }, OPTS); Consumption a = all.consume(m -> {
            allSeen.add(m.payload());
            return Outcome.success();
        }, OPTS)) {
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
                assertThat(allSeen).hasSize(3);
                assertThat(e.stats()).as("eu stats %s seen %s", e.stats(), euSeen).extracting(s -> s.skippedFiltered()).isEqualTo(2L);
            });
            assertThat(euSeen).containsExactly("eu-1");
            assertThat(allSeen).containsExactlyInAnyOrder("eu-1", "us-1", "none-1");

            // Re-declare with "us.*" instead: applies to messages produced from now on only.
            eu.register(GroupConfig.builder().bindings("us.*").build());
            p.produce("eu-2", routed("eu.orders"));
            p.produce("us-2", routed("us.orders"));
            await().atMost(Duration.ofSeconds(20)).until(() -> allSeen.size() == 5 && e.stats().skippedFiltered() == 3);
            Thread.sleep(300);
            assertThat(euSeen).containsExactlyInAnyOrder("eu-1", "us-2");
        } catch (InterruptedException ex) {
            throw new AssertionError(ex);
        }
    }

    @Test
    void compactedAwayAndOtherSchemaVersionsAreSkippedAndCounted() {
        sluice.stream("skips").register();
        Producer<V1> v1 = sluice.stream("skips", V1.class).producer();
        Producer<V2> v2 = sluice.stream("skips", V2.class).producer();
        v1.produce(new V1("old head"), ProduceOptions.builder().messageKey("k").compaction(1).build());
        v1.produce(new V1("new head"), ProduceOptions.builder().messageKey("k").compaction(2).build());
        v1.produce(new V1("plain v1"));
        v2.produce(new V2("plain v2"));
        ConsumerGroup<V1> group = sluice.stream("skips", V1.class).consumerGroup("g");
        group.register();
        List<String> seen = new CopyOnWriteArrayList<>();
        try (Consumption c = group.consume(m -> {
            seen.add(m.payload().v());
            return Outcome.success();
        }, OPTS)) {
            await().atMost(Duration.ofSeconds(20)).until(() -> c.stats().skippedVersion() == 1 && seen.size() == 2);
            assertThat(c.stats().skippedSuperseded()).isEqualTo(1);
            await().atMost(Duration.ofSeconds(10)).until(() -> group.get().orElseThrow().lag() == 0);
        }
        assertThat(seen).containsExactlyInAnyOrder("new head", "plain v1");
        // A group accepting version 2 explicitly sees only the v2 message.
        ConsumerGroup<byte[]> v2only = sluice.stream("skips").consumerGroup("v2");
        v2only.register(GroupConfig.builder().acceptVersions(2).build());
        List<Long> ids = new CopyOnWriteArrayList<>();
        try (Consumption c = v2only.consume(m -> {
            ids.add(m.id());
            return Outcome.success();
        }, OPTS)) {
            await().atMost(Duration.ofSeconds(20)).until(() -> ids.size() == 1 && c.stats().skippedVersion() == 2);
        }
    }
}
