package dev.sluice.internal.metrics;

/** The meters of one producer (its stream's counters, looked up once when the producer is built). */
public interface ProducerMeters {
    /**
     * A transaction of the producer committed {@code messages} new messages and {@code duplicates} idempotent repeats
     * (its batch: their sum).
     */
    void committed(int messages, int duplicates);
}
