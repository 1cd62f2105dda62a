package dev.sluice.internal.metrics;

import dev.sluice.MetricSnapshot;
import java.util.List;

/**
 * The meters of one client (docs/metrics.md). Names no Micrometer type: a client built without a registry holds
 * {@link NoMeters} and never loads a Micrometer class. Producers, consumptions and workers ask once, when they are
 * built, for the counters and timers of their stream, group or queue, so the hot paths only increment.
 */
public interface Meters {
    /**
     * The meters of a client: {@link NoMeters} without a registry, otherwise Micrometer meters registered in it.
     *
     * @param registry null, or an {@code io.micrometer.core.instrument.MeterRegistry} (kept as Object by the builder so
     *                 that no Micrometer class is loaded without one)
     */
    static Meters of(Object registry) {
        return registry == null ? NoMeters.INSTANCE : MicrometerMeters.of(registry);
    }

    /** The counters of a producer of {@code stream}. */
    ProducerMeters producer(String stream);

    /** The counters and handler timer of a consumption of {@code stream}/{@code group}. */
    DeliveryMeters consumer(String stream, String group);

    /** The counters and handler timer of a worker of {@code queue}. */
    JobMeters worker(String queue);

    /** Whether the client keeps gauges (a registry was given), and so runs a {@link MeterRefresh}. */
    boolean gauged();

    /**
     * Sets the gauges to the figures of one refresh (rows of kind {@code group} and {@code queue}; others are
     * ignored): gauges appear for groups and queues seen for the first time and are removed for those gone.
     */
    void figures(List<MetricSnapshot> figures);

    /** Removes the gauges (the client closed); counters and timers stay registered. */
    void close();
}
