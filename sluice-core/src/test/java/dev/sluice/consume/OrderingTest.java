package dev.sluice.consume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.ConcurrencyPolicy;
import dev.sluice.ConsumeOptions;
import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.GroupConfig;
import dev.sluice.Message;
import dev.sluice.Outcome;
import dev.sluice.ProduceOptions;
import dev.sluice.Producer;
import dev.sluice.RetryPolicy;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

@SluiceTest
class OrderingTest {
    static Sluice sluice;
    static final ConsumeOptions OPTS = ConsumeOptions.defaults().withPollInterval(Duration.ofMillis(20))
            .withIdleCheck(Duration.ofMillis(200)).withBatchSize(10).withConcurrency(8);
    static final RetryPolicy QUICK = RetryPolicy.DEFAULT.withBackoff(Duration.ofMillis(30), 1.5, Duration.ofMillis(100));

    @BeforeAll
    static void setUp(TestDatabase db) {
        sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build();
    }

    @AfterAll
    static void tearDown() {
        sluice.close();
    }

    /**
     * A same-key chain of a later range waits in memory while the earlier range's chain of that key runs,
     * instead of turning into deferred rows (which cost a row write, a claim and a wake-up each).
     */
    @Test
    void aBrieflyBusyKeyWaitsInMemoryInsteadOfDeferring() {
        for (ConcurrencyPolicy policy : List.of(ConcurrencyPolicy.EXCLUSIVE, ConcurrencyPolicy.ORDERED)) {
            String name = "wait-" + policy.name().toLowerCase();
            sluice.stream(name).register();
            ConsumerGroup<String> group = sluice.stream(name, String.class).consumerGroup("g");
            group.register(GroupConfig.builder().concurrency(policy).build());
            Producer<String> p = sluice.stream(name, String.class).producer();
            for (int i = 0; i < 6; i++) {
                p.produce("w" + i, ProduceOptions.key("k"));
            }
            List<String> order = new CopyOnWriteArrayList<>();
            AtomicInteger running = new AtomicInteger();
            AtomicInteger maxRunning = new AtomicInteger();
            // Ranges of two: ranges 2 and 3 are claimed while range 1's chain of "k" still runs.
            ConsumeOptions small = OPTS.withBatchSize(2).withConcurrency(4);
            try (Consumption c = group.consume(m -> {
                maxRunning.accumulateAndGet(running.incrementAndGet(), Math::max);
                try {
                    Thread.sleep(100);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                running.decrementAndGet();
                order.add(m.payload());
                return Outcome.success();
            }, small)) {
                await().atMost(Duration.ofSeconds(30)).until(() -> order.size() == 6);
                assertThat(c.stats().deferred()).as(policy + ": chains deferred").isZero();
            }
            assertThat(maxRunning.get()).isEqualTo(1);
            if (policy == ConcurrencyPolicy.ORDERED) {
                assertThat(order).containsExactly("w0", "w1", "w2", "w3", "w4", "w5");
            } else {
                assertThat(order).containsExactlyInAnyOrder("w0", "w1", "w2", "w3", "w4", "w5");
            }
        }
    }

    /**
     * Ordered: a failure sends a key's later messages to the exception queue as deferred rows; once it succeeds, the
     * key is handed straight from row to row (no claim, key take and release per row), in id order, one at a time,
     * and a row whose retry is not yet due is not run early (nothing runs past it).
     */
    @Test
    void aKeyBehindAFailureIsHandedFromRowToRowInOrder() {
        for (ConcurrencyPolicy policy : List.of(ConcurrencyPolicy.ORDERED)) {
            String name = "handover-" + policy.name().toLowerCase();
            sluice.stream(name).register();
            ConsumerGroup<String> group = sluice.stream(name, String.class).consumerGroup("g");
            group.register(GroupConfig.builder().concurrency(policy)
                    .retry(RetryPolicy.DEFAULT.withBackoff(Duration.ofMillis(300), 1.0, Duration.ofMillis(300))).build());
            Producer<String> p = sluice.stream(name, String.class).producer();
            List<Long> ids = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                ids.add(p.produce("h" + i, ProduceOptions.key("k")).id());
            }
            List<Long> order = new CopyOnWriteArrayList<>();
            List<String> attempts = new CopyOnWriteArrayList<>();
            AtomicInteger running = new AtomicInteger();
            AtomicInteger maxRunning = new AtomicInteger();
            try (Consumption c = group.consume(m -> {
                maxRunning.accumulateAndGet(running.incrementAndGet(), Math::max);
                try {
                    attempts.add(m.payload() + "#" + m.attempt());
                    // h0 and h10 fail once: the second failure sits in the middle of a handed-on chain.
                    if ((m.payload().equals("h0") || m.payload().equals("h10")) && m.attempt() == 1) {
                        return Outcome.retry();
                    }
                    order.add(m.id());
                    return Outcome.success();
                } finally {
                    running.decrementAndGet();
                }
            }, OPTS.withBatchSize(5))) {
                await().atMost(Duration.ofSeconds(30)).until(() -> order.size() == 20);
                assertThat(c.stats().deferred()).as(policy + ": the key's later messages waited as rows").isPositive();
                assertThat(c.stats().handedOn()).as(policy + ": rows ran on a handed-on key").isPositive();
            }
            assertThat(maxRunning.get()).as(policy + ": one message of the key at a time").isEqualTo(1);
            if (policy == ConcurrencyPolicy.ORDERED) {
                assertThat(order).as("ordered: id order across the handovers").containsExactlyElementsOf(ids);
                int retry = attempts.indexOf("h10#2");
                assertThat(attempts.subList(attempts.indexOf("h10#1"), retry)).as("nothing ran past h10 while it waited")
                        .containsExactly("h10#1");
            } else {
                assertThat(order).containsExactlyInAnyOrderElementsOf(ids);
            }
        }
    }

    @Test
    void exclusiveNeverRunsTwoSameKeyMessagesAtOnce() {
        sluice.stream("exclusive").register();
        ConsumerGroup<String> group = sluice.stream("exclusive", String.class).consumerGroup("g");
        group.register(GroupConfig.builder().concurrency(ConcurrencyPolicy.EXCLUSIVE).retry(QUICK).build());
        Producer<String> p = sluice.stream("exclusive", String.class).producer();
        for (int i = 0; i < 120; i++) {
            p.produce("e" + i, ProduceOptions.key("k" + (i % 4)));
        }
        Map<String, AtomicInteger> running = new ConcurrentHashMap<>();
        AtomicInteger maxSameKey = new AtomicInteger();
        AtomicInteger maxOverall = new AtomicInteger();
        AtomicInteger overall = new AtomicInteger();
        Set<String> done = ConcurrentHashMap.newKeySet();
        var handler = (dev.sluice.Handler<String>) m -> {
            int now = running.computeIfAbsent(m.messageKey(), k -> new AtomicInteger()).incrementAndGet();
            maxSameKey.accumulateAndGet(now, Math::max);
            maxOverall.accumulateAndGet(overall.incrementAndGet(), Math::max);
            try {
                Thread.sleep(ThreadLocalRandom.current().nextInt(3, 12));
                if (ThreadLocalRandom.current().nextInt(10) == 0 && m.attempt() == 1) {
                    return Outcome.retry();
                }
                done.add(m.payload());
                return Outcome.success();
            } finally {
                overall.decrementAndGet();
                running.get(m.messageKey()).decrementAndGet();
            }
        };
        try (Consumption a = group.consume(handler, OPTS); Consumption b = group.consume(handler, OPTS)) {
            await().atMost(Duration.ofSeconds(60)).until(() -> done.size() == 120);
        }
        assertThat(maxSameKey).hasValue(1);
        assertThat(maxOverall.get()).as("different keys still run in parallel").isGreaterThan(1);
    }

    @Test
    void orderedDeliversEachKeysMessagesInIdOrderAcrossRetries() {
        sluice.stream("ordered").register();
        ConsumerGroup<String> group = sluice.stream("ordered", String.class).consumerGroup("g");
        group.register(GroupConfig.builder().concurrency(ConcurrencyPolicy.ORDERED).retry(QUICK.withMaxAttempts(10)).build());
        Producer<String> p = sluice.stream("ordered", String.class).producer();
        Map<String, List<Long>> produced = new ConcurrentHashMap<>();
        for (int i = 0; i < 150; i++) {
            String key = "k" + (i % 5);
            long id = p.produce("o" + i, ProduceOptions.key(key)).id();
            produced.computeIfAbsent(key, k -> new CopyOnWriteArrayList<>()).add(id);
        }
        Map<String, List<Long>> successes = new ConcurrentHashMap<>();
        var handler = (dev.sluice.Handler<String>) m -> {
            if (ThreadLocalRandom.current().nextInt(6) == 0) {
                throw new IllegalStateException("transient");
            }
            successes.computeIfAbsent(m.messageKey(), k -> new CopyOnWriteArrayList<>()).add(m.id());
            return Outcome.success();
        };
        try (Consumption a = group.consume(handler, OPTS); Consumption b = group.consume(handler, OPTS)) {
            await().atMost(Duration.ofSeconds(90)).until(() -> successes.values().stream().mapToInt(List::size).sum() == 150);
        }
        for (String key : produced.keySet()) {
            assertThat(successes.get(key)).as("key %s", key).containsExactlyElementsOf(produced.get(key));
        }
    }

    @Test
    void aDeadPredecessorReleasesItsSuccessorsButARetryingOneBlocksThem() {
        sluice.stream("released").register();
        ConsumerGroup<String> group = sluice.stream("released", String.class).consumerGroup("g");
        group.register(GroupConfig.builder().concurrency(ConcurrencyPolicy.ORDERED)
                .retry(QUICK.withMaxAttempts(3)).build());
        Producer<String> p = sluice.stream("released", String.class).producer();
        p.produce("first", ProduceOptions.key("k"));
        p.produce("second", ProduceOptions.key("k"));
        p.produce("third", ProduceOptions.key("k"));
        List<String> log = new CopyOnWriteArrayList<>();
        try (Consumption c = group.consume(m -> {
            log.add(m.payload() + "#" + m.attempt());
            return m.payload().equals("first") ? Outcome.retry() : Outcome.success();
        }, OPTS)) {
            await().atMost(Duration.ofSeconds(30)).until(() -> log.contains("third#1"));
        }
        // first fails three times (retrying blocks the others), dies, then the others run in order.
        int deadAt = log.indexOf("first#3");
        assertThat(log.subList(0, deadAt + 1)).containsExactly("first#1", "first#2", "first#3");
        assertThat(log.subList(deadAt + 1, log.size())).containsExactly("second#1", "third#1");
    }

    @Test
    void twoInstancesNeverBothSucceedTheSameMessageWithoutLeaseExpiry() {
        sluice.stream("split").register();
        ConsumerGroup<String> group = sluice.stream("split", String.class).consumerGroup("g");
        group.register();
        Producer<String> p = sluice.stream("split", String.class).producer();
        List<dev.sluice.Outgoing<String>> batch = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            batch.add(dev.sluice.Outgoing.of("s" + i));
        }
        p.produceBatch(batch);
        Map<Long, AtomicInteger> successes = new ConcurrentHashMap<>();
        var handler = (dev.sluice.Handler<String>) (Message<String> m) -> {
            successes.computeIfAbsent(m.id(), k -> new AtomicInteger()).incrementAndGet();
            return Outcome.success();
        };
        try (Consumption a = group.consume(handler, OPTS); Consumption b = group.consume(handler, OPTS)) {
            await().atMost(Duration.ofSeconds(60)).until(() -> successes.size() == 500);
            assertThat(a.stats().succeeded()).isPositive();
            assertThat(b.stats().succeeded()).isPositive();
            assertThat(a.stats().leasesLost() + b.stats().leasesLost()).isZero();
        }
        assertThat(successes.values()).allSatisfy(n -> assertThat(n.get()).isEqualTo(1));
    }
}
