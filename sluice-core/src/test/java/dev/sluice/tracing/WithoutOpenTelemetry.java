package dev.sluice.tracing;

import static org.awaitility.Awaitility.await;

import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.EnqueueOptions;
import dev.sluice.Outcome;
import dev.sluice.ProduceOptions;
import dev.sluice.Producer;
import dev.sluice.Queue;
import dev.sluice.QueueStats;
import dev.sluice.Sluice;
import dev.sluice.Worker;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A client's life without OpenTelemetry — produce and enqueue with headers, consume with a retry, work a queue — run
 * by {@link NoOpenTelemetryTest} in a class loader that cannot see OpenTelemetry. Names no OpenTelemetry type.
 */
public final class WithoutOpenTelemetry {
    private WithoutOpenTelemetry() {
    }

    /** Runs the client against {@code jdbcUrl} in {@code schema}; returns "deliveries/jobs headers". */
    public static String run(String jdbcUrl, String schema) {
        try (Sluice sluice = Sluice.builder().jdbcUrl(jdbcUrl).schema(schema).build()) {
            sluice.stream("plain").register();
            ConsumerGroup<String> group = sluice.stream("plain", String.class).consumerGroup("g");
            group.register();
            try (Producer<String> p = sluice.stream("plain", String.class).producer()) {
                p.produce("a", ProduceOptions.builder().header("tenant", "acme").build());
            }
            AtomicInteger deliveries = new AtomicInteger();
            Map<String, String> seen = new ConcurrentHashMap<>();
            try (Consumption c = group.consume(m -> {
                deliveries.incrementAndGet();
                seen.putAll(m.headers());
                return m.attempt() == 1 ? Outcome.retry(Duration.ofMillis(10)) : Outcome.success();
            })) {
                await().atMost(Duration.ofSeconds(20)).until(() -> deliveries.get() == 2 && group.get().orElseThrow().lag() == 0);
            }
            Queue<String> q = sluice.queue("plain-jobs", String.class);
            q.enqueue("j", EnqueueOptions.builder().header("tenant", "acme").build());
            AtomicInteger jobs = new AtomicInteger();
            try (Worker w = q.work(job -> {
                jobs.incrementAndGet();
                seen.putAll(job.headers());
            })) {
                await().atMost(Duration.ofSeconds(20)).until(() -> {
                    QueueStats s = q.stats();
                    return jobs.get() == 1 && s.pending() == 0 && s.processing() == 0;
                });
            }
            return deliveries.get() + "/" + jobs.get() + " " + seen;
        }
    }
}
