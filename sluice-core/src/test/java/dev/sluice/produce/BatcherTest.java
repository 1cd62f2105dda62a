package dev.sluice.produce;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.ErrorCode;
import dev.sluice.ProduceOptions;
import dev.sluice.Produced;
import dev.sluice.Producer;
import dev.sluice.ProducerConfig;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

@SluiceTest
class BatcherTest {
    static Sluice sluice;
    static Rows rows;

    @BeforeAll
    static void setUp(TestDatabase db) {
        sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build();
        rows = new Rows(db);
    }

    @AfterAll
    static void tearDown() {
        sluice.close();
    }

    @Test
    void hundredConcurrentCallersEachGetTheirOwnIdAndShareTransactions() throws Exception {
        long id = sluice.stream("hundred").register().id();
        Producer<String> p = sluice.stream("hundred", String.class).producer();
        int callers = 100;
        CyclicBarrier start = new CyclicBarrier(callers);
        ExecutorService pool = Executors.newFixedThreadPool(callers);
        try {
            List<Future<Produced>> futures = new ArrayList<>();
            for (int i = 0; i < callers; i++) {
                String payload = "caller-" + i;
                futures.add(pool.submit(() -> {
                    start.await(10, TimeUnit.SECONDS);
                    return p.produce(payload);
                }));
            }
            List<Produced> results = new ArrayList<>();
            for (Future<Produced> f : futures) {
                results.add(f.get(60, TimeUnit.SECONDS));
            }
            assertThat(results).extracting(Produced::id).doesNotHaveDuplicates();
            Map<Long, Rows.Row> log = rows.log(id);
            assertThat(log).hasSize(callers);
            for (int i = 0; i < callers; i++) {
                assertThat(new String(log.get(results.get(i).id()).payload(), StandardCharsets.UTF_8)).isEqualTo("caller-" + i);
            }
            Set<Long> transactions = new HashSet<>();
            log.values().forEach(r -> transactions.add(r.xid()));
            assertThat(transactions).as("commit-driven batching shares transactions").hasSizeLessThan(callers);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void oneCallersFailureInTheDatabaseFailsOnlyThatCaller(TestDatabase db) {
        long id = sluice.stream("isolation").register().id();
        ProduceTest.installPoisonTrigger(db, id);
        // One batch in flight at a time, so queued calls are sure to share a batch with the poison.
        Producer<String> p = sluice.stream("isolation", String.class).producer(ProducerConfig.defaults().withMaxInFlight(1));
        List<CompletableFuture<Produced>> futures = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            futures.add(p.produceAsync(i == 30 ? "poison" : "ok-" + i, ProduceOptions.NONE));
        }
        for (int i = 0; i < 60; i++) {
            CompletableFuture<Produced> f = futures.get(i);
            if (i == 30) {
                assertThat(f).failsWithin(30, TimeUnit.SECONDS).withThrowableOfType(java.util.concurrent.ExecutionException.class)
                        .havingCause().isInstanceOfSatisfying(SluiceException.class, e -> {
                            assertThat(e.code()).isEqualTo(ErrorCode.DATABASE_ERROR);
                            assertThat(e.getMessage()).contains("poisoned");
                        });
            } else {
                assertThat(f).succeedsWithin(30, TimeUnit.SECONDS);
            }
        }
        assertThat(rows.count(id)).isEqualTo(59);
    }

    @Test
    void closeFlushesQueuedMessages() {
        long id = sluice.stream("flush").register().id();
        Producer<String> p = sluice.stream("flush", String.class).producer(ProducerConfig.defaults().withMaxInFlight(1));
        List<CompletableFuture<Produced>> futures = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            futures.add(p.produceAsync("m" + i, ProduceOptions.NONE));
        }
        p.close();
        assertThat(futures).allSatisfy(f -> assertThat(f).isCompleted().isNotCompletedExceptionally());
        assertThat(rows.count(id)).isEqualTo(500);
    }
}
