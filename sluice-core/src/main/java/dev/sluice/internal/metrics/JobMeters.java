package dev.sluice.internal.metrics;

/** The meters of one queue worker (its queue's counters and timer, looked up once when it is built). */
public interface JobMeters {
    /** Counts one attempt's end. */
    void count(JobOutcome outcome);

    /** Records one handler call that took {@code nanos}. */
    void handled(long nanos);

    /** Records one claim round trip of the worker that took {@code nanos}, whether it found jobs or not. */
    void claimed(long nanos);
}
