package dev.sluice.cli;

import dev.sluice.ConsumeOptions;
import dev.sluice.Consumption;
import dev.sluice.GroupConfig;
import dev.sluice.ProduceOptions;
import dev.sluice.Producer;
import dev.sluice.QueueOptions;
import dev.sluice.RetryPolicy;
import dev.sluice.ScheduleRunner;
import dev.sluice.ScheduleSpec;
import dev.sluice.Sluice;
import dev.sluice.Worker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The live workload of {@code sluice serve --demo}: a producer of keyed orders (about {@code rate} a second)
 * into {@code demo.orders}; groups {@code billing} (always succeeds) and {@code shipping} (fails a few percent,
 * some for good, so retries and dead letters appear); a queue {@code demo.emails} whose worker fails some jobs
 * for good (dead jobs to revive); and a schedule {@code demo.tick} every 30 s into that queue. Runs until closed.
 */
final class DemoWorkload implements AutoCloseable {
    static final String QUEUE = "demo.emails";
    private static final Logger log = LoggerFactory.getLogger(DemoWorkload.class);

    private final List<AutoCloseable> parts = new ArrayList<>();
    private final Thread feeder;
    private volatile boolean running = true;

    DemoWorkload(Sluice sluice, int rate) {
        String stream = DemoCommand.STREAM;
        sluice.stream(stream).register();
        RetryPolicy quick = RetryPolicy.DEFAULT.withMaxAttempts(4).withBackoff(Duration.ofMillis(500), 2.0, Duration.ofSeconds(5));
        sluice.stream(stream, String.class).consumerGroup("billing").register(GroupConfig.builder().retry(quick).build());
        sluice.stream(stream, String.class).consumerGroup("shipping").register(GroupConfig.builder().retry(quick).build());
        ConsumeOptions options = ConsumeOptions.defaults().withBatchSize(64).withConcurrency(4);
        parts.add(sluice.stream(stream, String.class).consumerGroup("billing").consume(m -> dev.sluice.Outcome.success(), options));
        Consumption shipping = sluice.stream(stream, String.class).consumerGroup("shipping")
                .consume(m -> DemoCommand.shippingOutcome(m.id(), m.attempt()), options);
        parts.add(shipping);
        QueueOptions qo = QueueOptions.builder().maxAttempts(3).backoffBase(Duration.ofMillis(500)).keepRuns(Duration.ofHours(1)).build();
        Worker emails = sluice.queue(QUEUE, String.class, qo).work(job -> {
            int bucket = Math.floorMod(Long.hashCode(job.id() * 0x9E3779B97F4A7C15L), 100);
            if (bucket < 4) {
                job.fail("mail server refused the recipient (demo failure)");
            } else {
                job.complete("sent to " + job.payload());
            }
        });
        parts.add(emails);
        sluice.schedule("demo.tick").register(ScheduleSpec.every(Duration.ofSeconds(30)).toQueue(QUEUE)
                .payload("digest@example.com").build());
        ScheduleRunner runner = sluice.runSchedules();
        parts.add(runner);
        Producer<String> producer = sluice.stream(stream, String.class).producer();
        parts.add(producer);
        long pauseNanos = 1_000_000_000L / Math.max(1, rate);
        feeder = new Thread(() -> {
            long i = 0;
            while (running) {
                String key = "customer-" + (i % 200);
                try {
                    producer.produce("{\"order\": " + i + ", \"customer\": \"" + key + "\", \"amount\": " + (10 + i % 90) + "}",
                            ProduceOptions.key(key));
                    if (i % 10 == 0) {
                        sluice.queue(QUEUE, String.class, qo).enqueue(key + "@example.com");
                    }
                } catch (RuntimeException e) {
                    if (running) {
                        log.warn("demo producer: {}", e.getMessage());
                        LockSupport.parkNanos(1_000_000_000L);
                    }
                }
                i++;
                LockSupport.parkNanos(pauseNanos);
            }
        }, "sluice-demo-producer");
        feeder.setDaemon(true);
        feeder.start();
    }

    @Override
    public void close() {
        running = false;
        feeder.interrupt();
        try {
            feeder.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (int i = parts.size() - 1; i >= 0; i--) {
            try {
                parts.get(i).close();
            } catch (Exception e) {
                log.warn("demo: closing a part failed: {}", e.toString());
            }
        }
    }
}
