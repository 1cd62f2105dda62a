package dev.sluice;

/**
 * A running consumption of a consumer group ({@link ConsumerGroup#consume}). Thread-safe.
 * {@link #close()} stops claiming, lets running handlers finish (up to the shutdown timeout),
 * records their outcomes and releases unfinished work at once, so another instance takes it
 * without waiting for a lease to expire.
 */
public interface Consumption extends AutoCloseable {

    /** Counters since the consumption started. */
    ConsumptionStats stats();

    /** Whether the consumption is still running (not closed). */
    boolean running();

    @Override
    void close();
}
