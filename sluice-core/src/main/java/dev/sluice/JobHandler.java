package dev.sluice;

/**
 * Handles one job of a {@link Worker}. Returning normally acks the job; throwing fails it (retry after
 * the backoff, dead after the last attempt). A handler may also resolve the handle itself
 * ({@link JobHandle#retry(java.time.Duration)}, {@link JobHandle#discard(String)}, …); the worker then
 * does nothing more. The worker heartbeats the claim while the handler runs, and holds no database
 * connection meanwhile.
 *
 * @param <T> the payload type
 */
@FunctionalInterface
public interface JobHandler<T> {

    /** Handles the job; see the interface documentation for what returning and throwing mean. */
    void handle(JobHandle<T> job) throws Exception;
}
