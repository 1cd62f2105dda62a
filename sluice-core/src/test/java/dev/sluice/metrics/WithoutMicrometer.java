package dev.sluice.metrics;

import static org.awaitility.Awaitility.await;

import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.Outcome;
import dev.sluice.ProduceOptions;
import dev.sluice.Producer;
import dev.sluice.Queue;
import dev.sluice.QueueStats;
import dev.sluice.Sluice;
import dev.sluice.Worker;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A client's life without a registry — produce, consume with a retry, work a queue, a maintenance pass — run by
 * {@link NoRegistryTest} in a class loader that cannot see Micrometer. Names no Micrometer type.
 */
public final class WithoutMicrometer {
    private WithoutMicrometer() {
    }

    /** Runs the client against {@code jdbcUrl} in {@code schema}; returns "deliveries/jobs" handled. */
    public static String run(String jdbcUrl, String schema) {
        try (Sluice sluice = Sluice.builder().jdbcUrl(jdbcUrl).schema(schema).maintenanceInterval(Duration.ofMillis(100))
                .build()) {
            sluice.stream("plain").register();
            ConsumerGroup<String> group = sluice.stream("plain", String.class).consumerGroup("g");
            group.register();
            try (Producer<String> p = sluice.stream("plain", String.class).producer()) {
                p.produce("a");
                p.produce("b", ProduceOptions.idempotent("b"));
                p.produce("b", ProduceOptions.idempotent("b"));
            }
            AtomicInteger deliveries = new AtomicInteger();
            try (Consumption c = group.consume(m -> {
                deliveries.incrementAndGet();
                return m.payload().equals("b") && m.attempt() == 1 ? Outcome.retry(Duration.ofMillis(10)) : Outcome.success();
            })) {
                await().atMost(Duration.ofSeconds(20)).until(() -> deliveries.get() == 3 && group.get().orElseThrow().lag() == 0);
            }
            Queue<String> q = sluice.queue("plain-jobs", String.class);
            q.enqueue("j");
            AtomicInteger jobs = new AtomicInteger();
            try (Worker w = q.work(job -> jobs.incrementAndGet())) {
                await().atMost(Duration.ofSeconds(20)).until(() -> {
                    QueueStats s = q.stats();
                    return jobs.get() == 1 && s.pending() == 0 && s.processing() == 0;
                });
            }
            if (!sluice.maintenance().runOnce().ok()) {
                throw new IllegalStateException("the maintenance pass failed");
            }
            return deliveries.get() + "/" + jobs.get();
        }
    }
}
