package dev.sluice.internal.metrics;

/** The meters of one consumption (its group's counters and timer, looked up once when it is built). */
public interface DeliveryMeters {
    /** Counts one delivery by what it became. */
    void count(DeliveryOutcome outcome);

    /** Records one handler call that took {@code nanos}. */
    void handled(long nanos);

    /** Records one claim round trip (a range, a takeover or a partitioned group's buckets) that took {@code nanos}. */
    void claimed(long nanos);
}
