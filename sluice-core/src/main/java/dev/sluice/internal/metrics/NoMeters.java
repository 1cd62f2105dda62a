package dev.sluice.internal.metrics;

import dev.sluice.MetricSnapshot;
import java.util.List;

/** The meters of a client without a registry: every call does nothing, and no Micrometer class is touched. */
public enum NoMeters implements Meters, ProducerMeters, DeliveryMeters, JobMeters {
    /** The one instance. */
    INSTANCE;

    @Override
    public ProducerMeters producer(String stream) {
        return this;
    }

    @Override
    public DeliveryMeters consumer(String stream, String group) {
        return this;
    }

    @Override
    public JobMeters worker(String queue) {
        return this;
    }

    @Override
    public boolean gauged() {
        return false;
    }

    @Override
    public void figures(List<MetricSnapshot> figures) {
        // no gauges
    }

    @Override
    public void close() {
        // nothing registered
    }

    @Override
    public void committed(int messages, int duplicates) {
        // not counted
    }

    @Override
    public void count(DeliveryOutcome outcome) {
        // not counted
    }

    @Override
    public void count(JobOutcome outcome) {
        // not counted
    }

    @Override
    public void handled(long nanos) {
        // not timed
    }

    @Override
    public void claimed(long nanos) {
        // not timed
    }
}
