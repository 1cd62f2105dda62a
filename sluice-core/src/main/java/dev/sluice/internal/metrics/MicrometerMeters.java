package dev.sluice.internal.metrics;

import dev.sluice.MetricSnapshot;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The meters of a client given a Micrometer registry (docs/metrics.md has every name and tag). Counters and timers
 * are registered when a producer, consumption or worker is built (the registry hands back the same meter for the
 * same name and tags, so parts of one stream, group or queue share them) and held by that part; a message or job only
 * increments them. The gauges are {@link MicrometerGauges}'.
 */
final class MicrometerMeters implements Meters {
    /** The claim timers' buckets: a claim is one round trip, so a few fixed buckets say enough (7 series with +Inf). */
    private static final Duration[] CLAIM_BUCKETS = {Duration.ofMillis(1), Duration.ofMillis(5), Duration.ofMillis(10),
            Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(500)};
    /** The batch summary's buckets, in messages per transaction (6 series with +Inf). */
    private static final double[] BATCH_BUCKETS = {1, 10, 100, 1_000, 10_000};
    private final MeterRegistry registry;
    private final MicrometerGauges gauges;

    private MicrometerMeters(MeterRegistry registry) {
        this.registry = registry;
        this.gauges = new MicrometerGauges(registry);
    }

    /** The meters of {@code registry}, an {@link MeterRegistry} (typed Object so that callers name no Micrometer type). */
    static Meters of(Object registry) {
        return new MicrometerMeters((MeterRegistry) registry);
    }

    @Override
    public ProducerMeters producer(String stream) {
        Counter messages = Counter.builder("sluice.produce.messages")
                .description("Messages committed by producers of this client (idempotent repeats not included)")
                .tag("stream", stream).register(registry);
        Counter duplicates = Counter.builder("sluice.produce.duplicates")
                .description("Produce calls answered with an earlier message's id (idempotency key repeated); nothing written")
                .tag("stream", stream).register(registry);
        DistributionSummary batch = DistributionSummary.builder("sluice.produce.batch")
                .description("Messages per committed produce transaction of this client (new ones and repeats)")
                .baseUnit("messages").serviceLevelObjectives(BATCH_BUCKETS).tag("stream", stream).register(registry);
        return (n, d) -> {
            batch.record(n + d);
            if (n > 0) {
                messages.increment(n);
            }
            if (d > 0) {
                duplicates.increment(d);
            }
        };
    }

    @Override
    public DeliveryMeters consumer(String stream, String group) {
        DeliveryOutcome[] outcomes = DeliveryOutcome.values();
        Counter[] counters = new Counter[outcomes.length];
        for (DeliveryOutcome o : outcomes) {
            counters[o.ordinal()] = Counter.builder("sluice.deliveries")
                    .description("Deliveries of stream messages to handlers of this client, by what each became")
                    .tags("stream", stream, "group", group, "outcome", o.tag()).register(registry);
        }
        Timer handler = Timer.builder("sluice.handler").description("Time in the group's handler, per delivery")
                .tags("stream", stream, "group", group).publishPercentileHistogram().register(registry);
        Timer claim = Timer.builder("sluice.claim").description("Time of one claim round trip of the group's consumers")
                .tags("stream", stream, "group", group).serviceLevelObjectives(CLAIM_BUCKETS).register(registry);
        return new DeliveryMeters() {
            @Override
            public void count(DeliveryOutcome outcome) {
                counters[outcome.ordinal()].increment();
            }

            @Override
            public void handled(long nanos) {
                handler.record(nanos, TimeUnit.NANOSECONDS);
            }

            @Override
            public void claimed(long nanos) {
                claim.record(nanos, TimeUnit.NANOSECONDS);
            }
        };
    }

    @Override
    public JobMeters worker(String queue) {
        JobOutcome[] outcomes = JobOutcome.values();
        Counter[] counters = new Counter[outcomes.length];
        for (JobOutcome o : outcomes) {
            counters[o.ordinal()] = Counter.builder("sluice.jobs")
                    .description("Job attempts ended by queue workers of this client, by how they ended")
                    .tags("queue", queue, "outcome", o.tag()).register(registry);
        }
        Timer handler = Timer.builder("sluice.job.handler").description("Time in the queue's job handler, per attempt")
                .tag("queue", queue).publishPercentileHistogram().register(registry);
        Timer claim = Timer.builder("sluice.job.claim").description("Time of one claim round trip of the queue's workers")
                .tag("queue", queue).serviceLevelObjectives(CLAIM_BUCKETS).register(registry);
        return new JobMeters() {
            @Override
            public void count(JobOutcome outcome) {
                counters[outcome.ordinal()].increment();
            }

            @Override
            public void handled(long nanos) {
                handler.record(nanos, TimeUnit.NANOSECONDS);
            }

            @Override
            public void claimed(long nanos) {
                claim.record(nanos, TimeUnit.NANOSECONDS);
            }
        };
    }

    @Override
    public boolean gauged() {
        return true;
    }

    @Override
    public void figures(List<MetricSnapshot> figures) {
        gauges.update(figures);
    }

    @Override
    public void close() {
        gauges.removeAll();
    }
}
