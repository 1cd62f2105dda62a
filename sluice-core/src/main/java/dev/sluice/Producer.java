package dev.sluice;

import java.sql.Connection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * Produces messages to one stream. Obtain one with {@link Stream#producer()}; it is thread-safe and
 * meant to be shared: concurrent {@link #produce} calls are coalesced into shared transactions by a
 * commit-driven batcher (each caller still gets its own result or its own error). Close it to flush.
 *
 * <p>Every produce validates before any round trip (null payload, size limit, key lengths, headers)
 * and raises a coded {@link SluiceException}; nothing is written for a rejected message.
 *
 * <p>With an {@link AmbientTransaction} on the client ({@link Sluice.Builder#ambientTransaction}; the Spring Boot
 * starter sets one), a produce call made inside the caller's open transaction joins it instead: the message commits
 * or rolls back with the caller's writes, as with {@link #produceInTransaction}.
 *
 * @param <T> the payload type
 */
public interface Producer<T> extends AutoCloseable {

    /** Produces one message without options; see {@link #produce(Object, ProduceOptions)}. */
    default Produced produce(T payload) {
        return produce(payload, ProduceOptions.NONE);
    }

    /**
     * Produces one message through the batcher and waits until its transaction committed. When the
     * producer's buffer is full (see {@link ProducerConfig}), waits up to
     * {@link ProducerConfig#bufferTimeout()} for room first.
     *
     * @return the id, or for a duplicate idempotency key the original id with {@code duplicate=true}
     * @throws SluiceException {@link ErrorCode#PRODUCER_BUFFER_FULL} (retryable) when the buffer stayed full
     */
    Produced produce(T payload, ProduceOptions options);

    /**
     * Like {@link #produce(Object, ProduceOptions)} without waiting; the future fails with a
     * {@link SluiceException}. Never blocks for room: when the producer's buffer is full the returned
     * future has already failed with {@link ErrorCode#PRODUCER_BUFFER_FULL} (retryable; back off).
     */
    CompletableFuture<Produced> produceAsync(T payload, ProduceOptions options);

    /**
     * Produces all messages in one transaction of their own: all are written or none. Results are in
     * order. Idempotency keys work across calls (a re-sent batch returns the original ids).
     */
    List<Produced> produceBatch(List<Outgoing<T>> messages);

    /**
     * Inserts the message inside the caller's open transaction (auto-commit off): the message exists
     * if and only if the caller commits. Never commits, never retries; compaction-key and
     * idempotency-key row locks are held until the caller's transaction ends.
     *
     * <p>Validation errors are raised before any round trip and leave the transaction as it was. Any
     * error after the insert was sent leaves the caller's transaction aborted: PostgreSQL refuses its
     * further statements and its commit rolls it back, so nothing of it is kept. Roll back, and retry
     * the whole unit of work in a new transaction when the error is retryable. A missing log partition
     * ({@link ErrorCode#PARTITION_UNAVAILABLE}) is extended on a connection of the producer's own
     * before the error is raised, so that retry succeeds; when this database user may not create
     * partitions the error is {@link ErrorCode#PARTITION_NOT_CREATABLE} (not retryable until an admin
     * runs {@code sluice stream extend-partitions}).
     */
    Produced produceInTransaction(Connection connection, T payload, ProduceOptions options);

    /**
     * Opens a transaction, runs {@code work} (the caller's own writes, returning the payload) and
     * inserts the message in the same transaction, replaying everything on serialization failure or
     * deadlock — so {@code work} must have no external effects.
     */
    Produced produce(Function<Connection, T> work, ProduceOptions options);

    /** The stream this producer writes to. */
    String streamName();

    /** Flushes queued messages (up to the shutdown timeout) and stops the batcher. */
    @Override
    void close();
}
