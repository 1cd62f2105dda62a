package dev.sluice;

/**
 * A running worker of a queue ({@link Queue#work(JobHandler, WorkOptions)}). Thread-safe.
 * {@link #close()} drains: it stops claiming, lets running handlers finish up to the shutdown timeout,
 * and releases the claims of unfinished ones at once (back to pending, the attempt not counted), so
 * another worker takes them without waiting for the visibility timeout.
 */
public interface Worker extends AutoCloseable {

    /** The queue this worker serves. */
    String queue();

    /** The identity recorded in {@code job.worker_id} for this worker's claims. */
    String workerId();

    /** Whether the worker is running (not closed). */
    boolean running();

    /** Drains and stops; see the interface documentation. Idempotent. */
    @Override
    void close();
}
