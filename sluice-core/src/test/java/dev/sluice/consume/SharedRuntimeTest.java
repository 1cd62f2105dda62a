package dev.sluice.consume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.ConcurrencyPolicy;
import dev.sluice.ConsumeOptions;
import dev.sluice.Consumption;
import dev.sluice.GroupConfig;
import dev.sluice.Outcome;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Consumptions run on the client's shared runtime: the threads of a client do not grow with the number of
 * groups it consumes, and every group still gets its messages, with at most {@code concurrency} handlers
 * at once per group even though the handler pool is shared.
 */
@SluiceTest
class SharedRuntimeTest {

    /** Live threads of this client (runtime, handlers, session, maintenance all carry the schema in their name). */
    private static long clientThreads(String schema) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith("sluice-") && t.getName().contains(schema)).count();
    }

    /** Every live Sluice thread of the JVM, whatever it is named after (test classes run one at a time). */
    private static long sluiceThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.isAlive() && t.getName().startsWith("sluice-")).count();
    }

    @Test
    void fortyGroupsRunOnTheClientsSchedulerAndHandlerThreadsOnly(TestDatabase db) {
        int groups = 40;
        long before = sluiceThreads();
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).runtimeThreads(2, 3).build()) {
            sluice.stream("many").register();
            Set<String> seen = ConcurrentHashMap.newKeySet();
            List<Consumption> running = new ArrayList<>();
            for (int i = 0; i < groups; i++) {
                String g = "g" + i;
                // Half of them keyed, so the busy-key retry loop is there too.
                sluice.stream("many", String.class).consumerGroup(g).register(GroupConfig.builder()
                        .concurrency(i % 2 == 0 ? ConcurrencyPolicy.PARALLEL : ConcurrencyPolicy.ORDERED).build());
                running.add(sluice.stream("many", String.class).consumerGroup(g).consume(m -> {
                    seen.add(g + ":" + m.payload());
                    return Outcome.success();
                }, ConsumeOptions.defaults().withConcurrency(8)));
            }
            try (Producer<String> p = sluice.stream("many", String.class).producer()) {
                for (int i = 0; i < 5; i++) {
                    p.produce("m" + i);
                }
            }
            await().atMost(Duration.ofSeconds(60)).until(() -> seen.size() == groups * 5);
            // 2 scheduler + 3 handler threads + the session (+ the maintenance thread the stream's producer may use):
            // the old code ran 3–4 threads per group (160 here).
            assertThat(clientThreads(db.schema())).isLessThanOrEqualTo(2 + 3 + 2);
            assertThat(sluiceThreads() - before).as("every thread the client started, by any name").isLessThanOrEqualTo(2 + 3 + 2);
            running.forEach(Consumption::close);
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> clientThreads(db.schema()) == 0);
    }

    @Test
    void aSharedPoolStillBoundsEachConsumptionByItsConcurrency(TestDatabase db) {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).runtimeThreads(1, 16).build()) {
            sluice.stream("bounded").register();
            sluice.stream("bounded", String.class).consumerGroup("g").register();
            AtomicInteger now = new AtomicInteger();
            AtomicInteger peak = new AtomicInteger();
            AtomicInteger done = new AtomicInteger();
            try (Producer<String> p = sluice.stream("bounded", String.class).producer()) {
                for (int i = 0; i < 60; i++) {
                    p.produce("m" + i);
                }
            }
            try (Consumption c = sluice.stream("bounded", String.class).consumerGroup("g").consume(m -> {
                peak.accumulateAndGet(now.incrementAndGet(), Math::max);
                Thread.sleep(5);
                now.decrementAndGet();
                done.incrementAndGet();
                return Outcome.success();
            }, ConsumeOptions.defaults().withConcurrency(3))) {
                await().atMost(Duration.ofSeconds(60)).until(() -> done.get() == 60);
            }
            assertThat(peak.get()).as("never more than concurrency handlers at once").isBetween(2, 3);
        }
    }
}
