package dev.sluice.metrics;

import static dev.sluice.metrics.Meters.counter;
import static dev.sluice.metrics.Meters.gauge;
import static dev.sluice.metrics.Meters.timerCount;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.ConsumptionStats;
import dev.sluice.GroupConfig;
import dev.sluice.GroupInfo;
import dev.sluice.MetricsAccess;
import dev.sluice.Outcome;
import dev.sluice.Producer;
import dev.sluice.RetryPolicy;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@code sluice.deliveries} counts every delivery once by what it became, {@code sluice.handler} times every handler
 * call, and the group's gauges show what the consumption left behind.
 */
@SluiceTest
class DeliveryMetersTest {
    private static final Duration SOON = Duration.ofMillis(10);

    @Test
    void deliveriesAreCountedByWhatTheyBecameAndEveryHandlerCallIsTimed(TestDatabase db) {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(false)
                .meterRegistry(registry).meterRefresh(Duration.ofHours(1)).build()) {
            sluice.stream("m.orders").register();
            ConsumerGroup<String> billing = sluice.stream("m.orders", String.class).consumerGroup("billing");
            billing.register(GroupConfig.builder().retry(RetryPolicy.DEFAULT.withMaxAttempts(2)).build());
            try (Producer<String> p = sluice.stream("m.orders", String.class).producer()) {
                produce(p, "ok", 5);           // 5 success
                produce(p, "retry-once", 3);   // 3 retry, then 3 success
                produce(p, "throw-once", 1);   // 1 retry (a throw), then 1 success
                produce(p, "delay-once", 1);   // 1 delay, then 1 success
                produce(p, "terminal", 2);     // 2 terminal
                produce(p, "always-retry", 1); // 1 retry, then terminal on the last of 2 attempts
            }
            AtomicInteger calls = new AtomicInteger();
            ConsumptionStats stats;
            try (Consumption c = billing.consume(m -> {
                calls.incrementAndGet();
                return switch (m.payload()) {
                    case "retry-once" -> m.attempt() == 1 ? Outcome.retry(SOON) : Outcome.success();
                    case "throw-once" -> {
                        if (m.attempt() == 1) {
                            throw new IllegalStateException("first attempt fails");
                        }
                        yield Outcome.success();
                    }
                    case "delay-once" -> m.delays() == 0 ? Outcome.delay(SOON) : Outcome.success();
                    case "terminal" -> Outcome.terminal("refused");
                    case "always-retry" -> Outcome.retry(SOON);
                    default -> Outcome.success();
                };
            })) {
                await().atMost(Duration.ofSeconds(20)).until(() -> settled(billing) && calls.get() == 19);
                stats = c.stats();
            }
            String[] group = {"stream", "m.orders", "group", "billing"};
            assertThat(counter(registry, "sluice.deliveries", tags(group, "success"))).isEqualTo(10);
            assertThat(counter(registry, "sluice.deliveries", tags(group, "retry"))).isEqualTo(5);
            assertThat(counter(registry, "sluice.deliveries", tags(group, "terminal"))).isEqualTo(3);
            assertThat(counter(registry, "sluice.deliveries", tags(group, "delay"))).isEqualTo(1);
            assertThat(timerCount(registry, "sluice.handler", group)).isEqualTo(19).isEqualTo(calls.get());
            // Every claim round trip is timed, those that found a range and those that found none.
            assertThat(timerCount(registry, "sluice.claim", group)).isGreaterThanOrEqualTo(stats.rangesClaimed())
                    .isPositive();
            // The same deliveries as the consumption's own counters.
            assertThat(stats.succeeded()).isEqualTo(10);
            assertThat(stats.retried()).isEqualTo(5);
            assertThat(stats.dead()).isEqualTo(3);
            assertThat(stats.delayed()).isEqualTo(1);

            // Nothing left to do: no lag, no backlog, the three dead letters.
            MetricsAccess.refresh(sluice);
            assertThat(gauge(registry, "sluice.consumer.lag.messages", group)).isZero();
            assertThat(gauge(registry, "sluice.consumer.backlog.messages", group)).isZero();
            assertThat(gauge(registry, "sluice.dead.letters", group)).isEqualTo(3);
        }
    }

    @Test
    void aGroupThatWasNeverConsumedByThisClientCountsNothing(TestDatabase db) {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(false)
                .meterRegistry(registry).meterRefresh(Duration.ofHours(1)).build()) {
            sluice.stream("m.idle").register();
            sluice.stream("m.idle").consumerGroup("nobody").register();
            try (Producer<byte[]> p = sluice.stream("m.idle").producer()) {
                p.produce(new byte[] {1});
            }
            assertThat(registry.find("sluice.deliveries").counters()).isEmpty();
            assertThat(registry.find("sluice.handler").timers()).isEmpty();
            MetricsAccess.refresh(sluice);
            assertThat(gauge(registry, "sluice.consumer.lag.messages", "stream", "m.idle", "group", "nobody")).isEqualTo(1);
        }
    }

    private static String[] tags(String[] group, String outcome) {
        return new String[] {group[0], group[1], group[2], group[3], "outcome", outcome};
    }

    private static void produce(Producer<String> p, String payload, int n) {
        for (int i = 0; i < n; i++) {
            p.produce(payload);
        }
    }

    /** Everything produced is resolved: committed through the head, nothing retrying, the dead letters there. */
    private static boolean settled(ConsumerGroup<String> g) {
        GroupInfo info = g.get().orElseThrow();
        return info.lag() == 0 && info.ready() == 0 && info.inflight() == 0 && info.deferred() == 0 && info.dead() == 3;
    }
}
