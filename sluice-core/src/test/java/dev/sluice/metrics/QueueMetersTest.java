package dev.sluice.metrics;

import static dev.sluice.metrics.Meters.counter;
import static dev.sluice.metrics.Meters.gauge;
import static dev.sluice.metrics.Meters.hasGauge;
import static dev.sluice.metrics.Meters.timerCount;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.JobHandle;
import dev.sluice.MetricsAccess;
import dev.sluice.Queue;
import dev.sluice.QueueOptions;
import dev.sluice.QueueStats;
import dev.sluice.Sluice;
import dev.sluice.WorkOptions;
import dev.sluice.Worker;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** {@code sluice.jobs} counts each attempt's end once by how it ended; the queue gauges show jobs by state. */
@SluiceTest
class QueueMetersTest {
    private static final WorkOptions QUICK = WorkOptions.defaults().withPollInterval(Duration.ofMillis(50))
            .withIdleCheck(Duration.ofMillis(200));

    @Test
    void jobAttemptsAreCountedByHowTheyEndedAndEveryHandlerCallIsTimed(TestDatabase db) {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(false)
                .meterRegistry(registry).meterRefresh(Duration.ofHours(1)).build()) {
            Queue<String> q = sluice.queue("m.jobs", String.class, QueueOptions.builder().maxAttempts(2)
                    .backoffBase(Duration.ofMillis(1)).maxBackoff(Duration.ofMillis(5)).build());
            enqueue(q, "ack", 4);          // 4 ack (the worker's)
            enqueue(q, "explicit-ack", 1); // 1 ack (the handler's)
            enqueue(q, "retry-once", 2);   // 2 retry, then 2 ack
            enqueue(q, "fail-once", 2);    // 2 fail (thrown), then 2 ack
            enqueue(q, "always-fail", 1);  // 1 fail, then dead on the last of 2 attempts
            enqueue(q, "terminal", 2);     // 2 terminal
            AtomicInteger calls = new AtomicInteger();
            try (Worker w = q.work(job -> {
                calls.incrementAndGet();
                switch (job.payload()) {
                    case "explicit-ack" -> job.ack();
                    case "retry-once" -> {
                        if (job.attempt() == 1) {
                            job.retry();
                        }
                    }
                    case "fail-once" -> {
                        if (job.attempt() == 1) {
                            throw new IllegalStateException("first attempt fails");
                        }
                    }
                    case "always-fail" -> job.fail("never works");
                    case "terminal" -> job.terminal("refused");
                    default -> {
                    }
                }
            }, QUICK)) {
                await().atMost(Duration.ofSeconds(20)).until(() -> {
                    QueueStats s = q.stats();
                    return calls.get() == 17 && s.pending() == 0 && s.processing() == 0 && s.dead() == 3
                            && counter(registry, "sluice.jobs", "queue", "m.jobs", "outcome", "ack") == 9;
                });
            }
            assertThat(counter(registry, "sluice.jobs", "queue", "m.jobs", "outcome", "ack")).isEqualTo(9);
            assertThat(counter(registry, "sluice.jobs", "queue", "m.jobs", "outcome", "retry")).isEqualTo(2);
            assertThat(counter(registry, "sluice.jobs", "queue", "m.jobs", "outcome", "fail")).isEqualTo(3);
            assertThat(counter(registry, "sluice.jobs", "queue", "m.jobs", "outcome", "dead")).isEqualTo(1);
            assertThat(counter(registry, "sluice.jobs", "queue", "m.jobs", "outcome", "terminal")).isEqualTo(2);
            assertThat(counter(registry, "sluice.jobs", "queue", "m.jobs", "outcome", "lost")).isZero();
            assertThat(counter(registry, "sluice.jobs", "queue", "m.jobs", "outcome", "cancelled")).isZero();
            assertThat(timerCount(registry, "sluice.job.handler", "queue", "m.jobs")).isEqualTo(17).isEqualTo(calls.get());
            // 17 attempts took at least one claim round trip each time the worker found jobs; each is timed.
            assertThat(timerCount(registry, "sluice.job.claim", "queue", "m.jobs")).isPositive();
        }
    }

    @Test
    void theQueueGaugesShowJobsByStateAndGoWhenTheQueueHasNoJobsLeft(TestDatabase db) {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).clientId("queue-gauges")
                .maintenanceInterval(Duration.ofMillis(100)).meterRegistry(registry).meterRefresh(Duration.ofMillis(100))
                .build()) {
            Queue<String> q = sluice.queue("m.depth", String.class);
            enqueue(q, "job", 6);
            List<JobHandle<String>> claimed = q.claim(3); // handles of Queue.claim: counted in no meter
            assertThat(claimed).hasSize(3);
            claimed.get(0).terminal("refused");
            // The manager's snapshots once it runs (the first running part makes the client compete).
            sluice.stream("m.starter").register();
            sluice.stream("m.starter").producer().close();
            await().atMost(Duration.ofSeconds(10)).until(() -> sluice.maintenance().holding());
            await().atMost(Duration.ofSeconds(10)).until(() -> state(registry, "pending") == 3
                    && state(registry, "processing") == 2 && state(registry, "dead") == 1);
            assertThat(MetricsAccess.ownFigures(sluice)).isFalse();
            assertThat(registry.find("sluice.jobs").counters()).isEmpty();

            claimed.get(1).ack();
            claimed.get(2).ack();
            q.claim(3).forEach(JobHandle::ack);
            await().atMost(Duration.ofSeconds(10)).until(() -> state(registry, "pending") == 0
                    && state(registry, "processing") == 0 && state(registry, "dead") == 1);
            q.admin().purgeAll(); // no live or dead job left: the queue is gone, and so are its gauges
            await().atMost(Duration.ofSeconds(10)).until(() -> !hasGauge(registry, "sluice.queue.jobs", "queue", "m.depth"));
        }
    }

    private static double state(SimpleMeterRegistry registry, String state) {
        return gauge(registry, "sluice.queue.jobs", "queue", "m.depth", "state", state);
    }

    private static void enqueue(Queue<String> q, String payload, int n) {
        for (int i = 0; i < n; i++) {
            q.enqueue(payload);
        }
    }
}
