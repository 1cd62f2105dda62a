package dev.sluice.consume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.ConsumeOptions;
import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.GroupConfig;
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
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Every redelivery is counted, also after a clean stop: a handler that outlives {@code close()}'s shutdown timeout has
 * delivered its message, so the message's next delivery — by a range's next holder, a row's next claim, or a
 * partitioned bucket's exception row — is the next attempt. Messages handed out but never started spend no attempt.
 */
@SluiceTest
class CleanStopAttemptTest {
    private static final ConsumeOptions STOP_FAST = ConsumeOptions.defaults().withPollInterval(Duration.ofMillis(20))
            .withLeaseTimeout(Duration.ofMinutes(5)).withShutdownTimeout(Duration.ofMillis(200)).withBatchSize(20);

    private static List<Long> produce(Sluice sluice, String stream, int n, String key) {
        List<Long> ids = new ArrayList<>();
        try (Producer<String> p = sluice.stream(stream, String.class).producer()) {
            for (int i = 0; i < n; i++) {
                ids.add(p.produce("m" + i, key == null ? ProduceOptions.NONE : ProduceOptions.key(key + i)).id());
            }
        }
        return ids;
    }

    /**
     * Consumes with a handler that hangs on {@code hang} (on the given attempt) until the test ends, stops cleanly while
     * it hangs, then consumes again and returns each message's attempt in the second consumption.
     */
    private static Map<Long, Integer> stopWhileHanging(ConsumerGroup<String> g, long hang, int hangAttempt, int expect,
                                                       boolean failFirst) throws Exception {
        CountDownLatch hanging = new CountDownLatch(1);
        CountDownLatch end = new CountDownLatch(1);
        try {
            Consumption first = g.consume(m -> {
                if (m.id() == hang && failFirst && m.attempt() == 1) {
                    return Outcome.retry(); // the first attempt fails
                }
                if (m.id() == hang && m.attempt() == hangAttempt) {
                    hanging.countDown();
                    end.await(60, TimeUnit.SECONDS); // outlives the shutdown timeout
                }
                return Outcome.success();
            }, STOP_FAST.withConcurrency(1));
            assertThat(hanging.await(20, TimeUnit.SECONDS)).isTrue();
            first.close();
            Map<Long, Integer> attempts = new ConcurrentHashMap<>();
            try (Consumption second = g.consume(m -> {
                attempts.putIfAbsent(m.id(), m.attempt());
                return Outcome.success();
            }, STOP_FAST)) {
                await().atMost(Duration.ofSeconds(20)).until(() -> attempts.size() >= expect);
            }
            return attempts;
        } finally {
            end.countDown();
        }
    }

    @Test
    void aRangeGivenBackWithAHandlerStillRunningIsTakenOverAsTheNextAttempt(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(false).build()) {
            sluice.stream("stop.range").register();
            ConsumerGroup<String> g = sluice.stream("stop.range", String.class).consumerGroup("g");
            g.register();
            List<Long> ids = produce(sluice, "stop.range", 5, null);
            // m0 succeeds, m1 hangs through the stop; m2..m4 were never started (concurrency 1).
            Map<Long, Integer> attempts = stopWhileHanging(g, ids.get(1), 1, 4, false);
            assertThat(attempts).doesNotContainKey(ids.get(0));
            assertThat(attempts.get(ids.get(1))).isEqualTo(2);
            // The range's next holder counts one reclaim for all of it (a range has one attempt for its messages).
            assertThat(attempts.get(ids.get(4))).isEqualTo(2);
        }
    }

    @Test
    void aRowGivenBackWithItsHandlerStillRunningKeepsThatAttempt(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(false).build()) {
            sluice.stream("stop.row").register();
            ConsumerGroup<String> g = sluice.stream("stop.row", String.class).consumerGroup("g");
            g.register(GroupConfig.builder().retry(RetryPolicy.DEFAULT.withMaxAttempts(9)
                    .withBackoff(Duration.ofMillis(10), 2.0, Duration.ofMillis(20))).build());
            List<Long> ids = produce(sluice, "stop.row", 1, null);
            // Attempt 1 fails (a retry row), attempt 2 runs as a row and hangs through the stop: the next is attempt 3.
            Map<Long, Integer> attempts = stopWhileHanging(g, ids.get(0), 2, 1, true);
            assertThat(attempts.get(ids.get(0))).isEqualTo(3);
        }
    }

    @Test
    void aBucketBatchStoppedWithAHandlerStillRunningCountsOnlyThatDelivery(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(false).build()) {
            sluice.stream("stop.bucket").register();
            ConsumerGroup<String> g = sluice.stream("stop.bucket", String.class).consumerGroup("g");
            g.register(GroupConfig.builder().partitions(1).build());
            List<Long> ids = produce(sluice, "stop.bucket", 4, "k");
            // Four keys in one bucket, one handler: m0 succeeds, m1 hangs through the stop, m2 and m3 never start.
            Map<Long, Integer> attempts = stopWhileHanging(g, ids.get(1), 1, 3, false);
            assertThat(attempts).doesNotContainKey(ids.get(0));
            assertThat(attempts.get(ids.get(1))).isEqualTo(2);
            assertThat(attempts.get(ids.get(2))).isEqualTo(1);
            assertThat(attempts.get(ids.get(3))).isEqualTo(1);
        }
    }
}
