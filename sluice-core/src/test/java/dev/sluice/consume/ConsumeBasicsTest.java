package dev.sluice.consume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.ConsumeOptions;
import dev.sluice.Consumption;
import dev.sluice.GroupInfo;
import dev.sluice.Outcome;
import dev.sluice.ProduceOptions;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

@SluiceTest
class ConsumeBasicsTest {
    static Sluice sluice;

    @BeforeAll
    static void setUp(TestDatabase db) {
        sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build();
    }

    @AfterAll
    static void tearDown() {
        sluice.close();
    }

    @Test
    void twoGroupsEachReceiveEveryMessageOnce() {
        sluice.stream("basics").register();
        Producer<String> p = sluice.stream("basics", String.class).producer();
        for (int i = 0; i < 300; i++) {
            p.produce("m" + i, ProduceOptions.key("k" + (i % 7)));
        }
        Map<String, AtomicInteger> a = new ConcurrentHashMap<>();
        Map<String, AtomicInteger> b = new ConcurrentHashMap<>();
        sluice.stream("basics", String.class).consumerGroup("a").register();
        sluice.stream("basics", String.class).consumerGroup("b").register();
        try (Consumption ca = sluice.stream("basics", String.class).consumerGroup("a").consume(m -> {
                a.computeIfAbsent(m.payload(), k -> new AtomicInteger()).incrementAndGet();
                return Outcome.success();
            }, ConsumeOptions.defaults().withBatchSize(16));
             Consumption cb = sluice.stream("basics", String.class).consumerGroup("b").consume(m -> {
                 b.computeIfAbsent(m.payload(), k -> new AtomicInteger()).incrementAndGet();
                 return Outcome.success();
             })) {
            for (int i = 300; i < 400; i++) {
                p.produce("m" + i);
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> a.size() == 400 && b.size() == 400);
            await().atMost(Duration.ofSeconds(10)).until(() ->
                    sluice.stream("basics").consumerGroups().stream().allMatch(gi -> gi.committed() == gi.head()));
            assertThat(a.values()).allSatisfy(n -> assertThat(n.get()).isEqualTo(1));
            assertThat(b.values()).allSatisfy(n -> assertThat(n.get()).isEqualTo(1));
            assertThat(ca.stats().succeeded()).isEqualTo(400);
        }
        List<GroupInfo> groups = sluice.stream("basics").consumerGroups();
        assertThat(groups).extracting(GroupInfo::name).containsExactly("a", "b");
        assertThat(groups).allSatisfy(g -> {
            assertThat(g.lag()).isZero();
            assertThat(g.openRanges()).isZero();
            assertThat(g.dead()).isZero();
        });
    }
}
