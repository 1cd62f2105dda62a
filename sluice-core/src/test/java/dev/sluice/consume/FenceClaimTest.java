package dev.sluice.consume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.ConsumeOptions;
import dev.sluice.Consumption;
import dev.sluice.Outcome;
import dev.sluice.ProduceOptions;
import dev.sluice.Produced;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The fence at the claim level (docs/consume.md, "the fence"): producer A takes its transaction id, B inserts id 1
 * and stays open, A inserts id 2 and commits. No claim may pass 1 until B ends.
 */
@SluiceTest
class FenceClaimTest {

    @Test
    void noClaimPassesAnIdWhoseProducerMightStillCommit(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            long streamId = sluice.stream("fenced").register().id();
            Producer<String> p = sluice.stream("fenced", String.class).producer();
            var group = sluice.stream("fenced", String.class).consumerGroup("g");
            group.register();
            List<String> seen = new CopyOnWriteArrayList<>();
            try (Consumption c = group.consume(m -> {
                seen.add(m.payload());
                return Outcome.success();
            }, ConsumeOptions.defaults().withPollInterval(Duration.ofMillis(50)))) {
                for (boolean bCommits : new boolean[] {true, false}) {
                    seen.clear();
                    try (Connection a = db.connect(); Connection b = db.connect()) {
                        a.setAutoCommit(false);
                        b.setAutoCommit(false);
                        try (Statement s = a.createStatement()) {
                            s.execute("SELECT pg_current_xact_id()");
                        }
                        Produced one = p.produceInTransaction(b, "B", ProduceOptions.NONE);
                        Produced two = p.produceInTransaction(a, "A", ProduceOptions.NONE);
                        assertThat(two.id()).isGreaterThan(one.id());
                        a.commit();
                        Thread.sleep(1500); // the consumer polls (and is woken by A's notification) meanwhile
                        assertThat(seen).as("nothing may be claimed past B's id while B is open").isEmpty();
                        assertThat(ConsumeFixture.scalar(db, "SELECT claimed FROM \"" + db.schema()
                                + "\".consumer_group_cursor_" + streamId)).isLessThan(one.id());
                        if (bCommits) {
                            b.commit();
                        } else {
                            b.rollback();
                        }
                    }
                    List<String> expected = bCommits ? List.of("A", "B") : List.of("A");
                    await().atMost(Duration.ofSeconds(20)).untilAsserted(() ->
                            assertThat(seen).containsExactlyInAnyOrderElementsOf(expected));
                }
            }
        }
    }

    @Test
    void aRandomizedRunWithInterleavedLongTransactionsLosesNothing(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            sluice.stream("random").register();
            Producer<String> p = sluice.stream("random", String.class).producer();
            var group = sluice.stream("random", String.class).consumerGroup("g");
            group.register();
            Set<String> seen = ConcurrentHashMap.newKeySet();
            Set<String> committed = ConcurrentHashMap.newKeySet();
            ExecutorService producers = Executors.newFixedThreadPool(4);
            try (Consumption c = group.consume(m -> {
                seen.add(m.payload());
                return Outcome.success();
            }, ConsumeOptions.defaults().withBatchSize(7).withPollInterval(Duration.ofMillis(20)))) {
                List<Future<?>> futures = new ArrayList<>();
                for (int w = 0; w < 4; w++) {
                    int seed = w;
                    futures.add(producers.submit(() -> {
                        Random random = new Random(seed);
                        for (int i = 0; i < 60; i++) {
                            String payload = "w" + seed + "-" + i;
                            if (random.nextInt(4) == 0) {
                                // A long transaction: draw an id, linger, then commit or roll back.
                                try (Connection conn = db.connect()) {
                                    conn.setAutoCommit(false);
                                    p.produceInTransaction(conn, payload, ProduceOptions.NONE);
                                    Thread.sleep(random.nextInt(300));
                                    if (random.nextInt(5) == 0) {
                                        conn.rollback();
                                    } else {
                                        conn.commit();
                                        committed.add(payload);
                                    }
                                }
                            } else {
                                p.produce(payload);
                                committed.add(payload);
                            }
                        }
                        return null;
                    }));
                }
                for (Future<?> f : futures) {
                    f.get(120, TimeUnit.SECONDS);
                }
                await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(seen).containsAll(committed));
                assertThat(seen).containsExactlyInAnyOrderElementsOf(committed);
                assertThat(c.stats().delivered()).isEqualTo(committed.size());
            } finally {
                producers.shutdownNow();
            }
        }
    }
}
