package dev.sluice.consume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.ConcurrencyPolicy;
import dev.sluice.ConsumeOptions;
import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.DeadLetter;
import dev.sluice.GroupConfig;
import dev.sluice.Message;
import dev.sluice.Outcome;
import dev.sluice.ProduceOptions;
import dev.sluice.Producer;
import dev.sluice.RetryPolicy;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.internal.consume.AsyncHandler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Handlers whose outcomes arrive later ({@link AsyncHandler}, what the HTTP pull bridge uses): a parallel group's
 * ranges start every message without a thread and record each outcome when it arrives, with the library's rules
 * for every outcome kind, failures and stops; the other paths wait for the stage.
 */
@SluiceTest
class AsyncHandlerTest {
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

    /** An executor that counts what it is given: a parallel range of an async handler must give it nothing. */
    static final class CountingExecutor implements Executor {
        final AtomicInteger tasks = new AtomicInteger();
        final java.util.concurrent.ExecutorService pool = Executors.newCachedThreadPool();

        @Override
        public void execute(Runnable r) {
            tasks.incrementAndGet();
            pool.execute(r);
        }
    }

    private static long produce(String stream, int n) {
        long last = 0;
        try (Producer<String> p = sluice.stream(stream, String.class).producer()) {
            for (int i = 0; i < n; i++) {
                last = p.produce("m" + i, ProduceOptions.NONE).id();
            }
        }
        return last;
    }

    @Test
    void outcomesGivenLaterFromAnotherThreadCommitEverythingOnceWithoutAThreadPerMessage() throws Exception {
        sluice.stream("async.later").register();
        ConsumerGroup<String> group = sluice.stream("async.later", String.class).consumerGroup("g");
        group.register();
        long head = produce("async.later", 1_000);
        BlockingQueue<CompletableFuture<Outcome>> out = new LinkedBlockingQueue<>();
        Map<Long, Integer> seen = new ConcurrentHashMap<>();
        CountingExecutor executor = new CountingExecutor();
        // A concurrency far below the backlog: the bound holds although no handler thread counts against it.
        AsyncHandler<String> handler = m -> {
            seen.merge(m.id(), 1, Integer::sum);
            CompletableFuture<Outcome> f = new CompletableFuture<>();
            out.add(f);
            return f;
        };
        AtomicInteger peakOut = new AtomicInteger();
        Thread resolver = new Thread(() -> {
            List<CompletableFuture<Outcome>> batch = new ArrayList<>();
            while (!Thread.currentThread().isInterrupted()) {
                try {
                    CompletableFuture<Outcome> first = out.poll(50, TimeUnit.MILLISECONDS);
                    if (first == null) {
                        continue;
                    }
                    batch.add(first);
                    out.drainTo(batch);
                    peakOut.accumulateAndGet(batch.size(), Math::max);
                    Collections.shuffle(batch); // outcomes arrive in any order
                    batch.forEach(f -> f.complete(Outcome.success()));
                    batch.clear();
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "async-resolver");
        resolver.start();
        try (Consumption c = group.consume(handler, FAST.withConcurrency(64).withBatchSize(50).withExecutor(executor))) {
            await().atMost(Duration.ofSeconds(30)).until(() -> group.get().orElseThrow().committed() == head);
            assertThat(c.stats().succeeded()).isEqualTo(1_000);
        } finally {
            resolver.interrupt();
            resolver.join();
            executor.pool.shutdown();
        }
        assertThat(seen).hasSize(1_000).allSatisfy((id, n) -> assertThat(n).as("deliveries of %d", id).isEqualTo(1));
        assertThat(executor.tasks).as("tasks given to the executor").hasValue(0);
        // The loop claims ahead while fewer than concurrency + batch are out, one range at a time.
        assertThat(peakOut.get()).as("messages out at once").isLessThan(64 + 2 * 50);
    }

    @Test
    void everyOutcomeKindFailedStagesAndThrowsFollowTheLibrarysRules() {
        sluice.stream("async.kinds").register();
        ConsumerGroup<String> group = sluice.stream("async.kinds", String.class).consumerGroup("g");
        group.register(GroupConfig.builder().retry(RetryPolicy.DEFAULT.withMaxAttempts(2)
                .withBackoff(Duration.ofMillis(10), 1.0, Duration.ofMillis(10)).withJitter(0)).build());
        try (Producer<String> p = sluice.stream("async.kinds", String.class).producer()) {
            for (String s : List.of("ok", "retry-once", "terminal", "failed-stage", "throws", "null")) {
                p.produce(s, ProduceOptions.NONE);
            }
        }
        List<String> calls = new CopyOnWriteArrayList<>();
        java.util.concurrent.ScheduledExecutorService later = Executors.newSingleThreadScheduledExecutor();
        AsyncHandler<String> handler = m -> {
            calls.add(m.payload() + "#" + m.attempt());
            CompletableFuture<Outcome> f = new CompletableFuture<>();
            Runnable give = switch (m.payload()) {
                case "retry-once" -> () -> f.complete(m.attempt() == 1 ? Outcome.retry() : Outcome.success());
                case "terminal" -> () -> f.complete(Outcome.terminal("given up later"));
                case "failed-stage" -> () -> f.completeExceptionally(new IllegalStateException("stage failed " + m.attempt()));
                case "throws" -> () -> {
                    throw new IllegalStateException("unreachable");
                };
                case "null" -> () -> f.complete(null);
                default -> () -> f.complete(Outcome.success());
            };
            if (m.payload().equals("throws")) {
                throw new IllegalArgumentException("start threw " + m.attempt());
            }
            later.schedule(give, 5, TimeUnit.MILLISECONDS);
            return f;
        };
        try (Consumption c = group.consume(handler, FAST)) {
            await().atMost(Duration.ofSeconds(30)).until(() -> group.get().orElseThrow().dead() == 3
                    && calls.contains("retry-once#2") && group.get().orElseThrow().ready() == 0);
            assertThat(c.stats().succeeded()).isEqualTo(3); // ok, null, retry-once at its second attempt
        } finally {
            later.shutdownNow();
        }
        List<DeadLetter> dead = group.admin().deadLetters(null, 10).items();
        assertThat(dead).extracting(DeadLetter::lastError).anySatisfy(e -> assertThat(e).contains("given up later"))
                .anySatisfy(e -> assertThat(e).contains("stage failed 2"))
                .anySatisfy(e -> assertThat(e).contains("start threw 2"));
        assertThat(calls).contains("failed-stage#1", "failed-stage#2", "throws#1", "throws#2").doesNotContain("ok#2", "null#2");
    }

    @Test
    void aStopGivesBackWhatIsOutAndOutcomesArrivingAfterItChangeNothing() {
        sluice.stream("async.stop").register();
        ConsumerGroup<String> group = sluice.stream("async.stop", String.class).consumerGroup("g");
        group.register();
        long head = produce("async.stop", 20);
        List<CompletableFuture<Outcome>> out = new CopyOnWriteArrayList<>();
        AsyncHandler<String> never = m -> {
            CompletableFuture<Outcome> f = new CompletableFuture<>();
            out.add(f);
            return f;
        };
        Consumption first = group.consume(never, FAST.withShutdownTimeout(Duration.ZERO));
        await().atMost(Duration.ofSeconds(30)).until(() -> out.size() == 20);
        first.close();
        out.subList(0, 10).forEach(f -> f.complete(Outcome.success())); // too late: the range was given back
        out.subList(10, 20).forEach(f -> f.complete(Outcome.retry()));
        assertThat(group.get().orElseThrow().committed()).isLessThan(head);
        assertThat(first.stats().succeeded()).as("late outcomes are not counted").isZero();
        assertThat(first.stats().retried()).as("late outcomes are not counted").isZero();
        Map<Long, Integer> attempts = new ConcurrentHashMap<>();
        try (Consumption second = group.consume(m -> {
            attempts.put(m.id(), m.attempt());
            return Outcome.success();
        }, FAST)) {
            await().atMost(Duration.ofSeconds(30)).until(() -> group.get().orElseThrow().committed() == head);
        }
        assertThat(attempts).hasSize(20);
        // Every one of them was delivered (its future was out) before the stop: their next delivery is counted.
        assertThat(attempts.values()).as("a delivery cut short by a clean stop is counted").containsOnly(2);
    }

    @Test
    void keyedPoliciesWaitForEachStageAndKeepTheirOrderPerKey() {
        sluice.stream("async.keyed").register();
        ConsumerGroup<String> group = sluice.stream("async.keyed", String.class).consumerGroup("g");
        group.register(GroupConfig.builder().concurrency(ConcurrencyPolicy.ORDERED).build());
        try (Producer<String> p = sluice.stream("async.keyed", String.class).producer()) {
            for (int i = 0; i < 60; i++) {
                p.produce("k" + (i % 3) + ":" + i, ProduceOptions.key("k" + (i % 3)));
            }
        }
        Map<String, List<Integer>> order = new ConcurrentHashMap<>();
        java.util.concurrent.ExecutorService later = Executors.newFixedThreadPool(4);
        AsyncHandler<String> handler = (Message<String> m) -> CompletableFuture.supplyAsync(() -> {
            String[] parts = m.payload().split(":");
            order.computeIfAbsent(parts[0], k -> new CopyOnWriteArrayList<>()).add(Integer.parseInt(parts[1]));
            return Outcome.success();
        }, later);
        try (Consumption c = group.consume(handler, FAST)) {
            await().atMost(Duration.ofSeconds(30)).until(() -> c.stats().succeeded() == 60);
        } finally {
            later.shutdown();
        }
        order.forEach((k, ids) -> assertThat(ids).as("order of %s", k).isSorted().hasSize(20));
    }
}
