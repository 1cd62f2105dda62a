package dev.sluice;

import java.time.Duration;
import java.util.Objects;

/**
 * Options of one in-process {@link Producer}: its batcher, its buffer and its serde.
 *
 * <p>The buffer holds what {@link Producer#produce(Object, ProduceOptions)} and
 * {@link Producer#produceAsync(Object, ProduceOptions)} accepted and the batcher has not yet written
 * (queued or in a batch transaction). It is bounded in messages and in bytes so that a slow or
 * unreachable database cannot make the process run out of memory: when it is full,
 * {@code produceAsync} fails at once and {@code produce} waits up to {@code bufferTimeout}, both with
 * {@link ErrorCode#PRODUCER_BUFFER_FULL} (retryable).
 *
 * @param maxBatchSize        most messages one shared transaction carries (default 256)
 * @param maxInFlight         most batch transactions open at once (default 2); while they run, new calls queue and
 *                            form the next batch — batch size grows with load, there is no linger timer
 * @param serde               payload serde; {@code null} means the default for the payload type
 * @param shutdownTimeout     how long {@link Producer#close()} waits for queued messages (default 15 s)
 * @param maxBufferedMessages most messages accepted and not yet written (default 10,000)
 * @param maxBufferedBytes    most bytes (payloads, keys and headers) accepted and not yet written (default 64 MiB);
 *                            a single larger message is still accepted when the buffer is empty
 * @param bufferTimeout       how long {@code produce} waits for room in a full buffer (default 10 s; zero fails at once)
 */
public record ProducerConfig(int maxBatchSize, int maxInFlight, Serde<?> serde, Duration shutdownTimeout,
                             int maxBufferedMessages, long maxBufferedBytes, Duration bufferTimeout) {
    /** Default most messages per shared transaction. */
    public static final int DEFAULT_MAX_BATCH_SIZE = 256;
    /** Default most batch transactions open at once. */
    public static final int DEFAULT_MAX_IN_FLIGHT = 2;
    /** Default most buffered messages. */
    public static final int DEFAULT_MAX_BUFFERED_MESSAGES = 10_000;
    /** Default most buffered bytes: 64 MiB. */
    public static final long DEFAULT_MAX_BUFFERED_BYTES = 64L << 20;
    /** Default wait of {@code produce} for room in a full buffer. */
    public static final Duration DEFAULT_BUFFER_TIMEOUT = Duration.ofSeconds(10);

    /** Validates every field; bad values raise {@link ErrorCode#INVALID_CONFIG}. */
    public ProducerConfig {
        if (maxBatchSize < 1 || maxBatchSize > 10_000) {
            throw new SluiceException(ErrorCode.INVALID_CONFIG, "maxBatchSize must be between 1 and 10000 (got " + maxBatchSize + ")");
        }
        if (maxInFlight < 1 || maxInFlight > 64) {
            throw new SluiceException(ErrorCode.INVALID_CONFIG, "maxInFlight must be between 1 and 64 (got " + maxInFlight + ")");
        }
        Objects.requireNonNull(shutdownTimeout, "shutdownTimeout");
        if (shutdownTimeout.isNegative()) {
            throw new SluiceException(ErrorCode.INVALID_CONFIG, "shutdownTimeout must not be negative");
        }
        if (maxBufferedMessages < 1 || maxBufferedMessages > 10_000_000) {
            throw new SluiceException(ErrorCode.INVALID_CONFIG, "maxBufferedMessages must be between 1 and 10000000 (got "
                    + maxBufferedMessages + ")");
        }
        if (maxBufferedBytes < 1) {
            throw new SluiceException(ErrorCode.INVALID_CONFIG, "maxBufferedBytes must be at least 1 (got " + maxBufferedBytes + ")");
        }
        Objects.requireNonNull(bufferTimeout, "bufferTimeout");
        if (bufferTimeout.isNegative() || bufferTimeout.compareTo(Duration.ofHours(1)) > 0) {
            throw new SluiceException(ErrorCode.INVALID_CONFIG, "bufferTimeout must be between 0 and 1 hour (got "
                    + bufferTimeout + ")");
        }
    }

    /** The defaults. */
    public static ProducerConfig defaults() {
        return new ProducerConfig(DEFAULT_MAX_BATCH_SIZE, DEFAULT_MAX_IN_FLIGHT, null, Duration.ofSeconds(15),
                DEFAULT_MAX_BUFFERED_MESSAGES, DEFAULT_MAX_BUFFERED_BYTES, DEFAULT_BUFFER_TIMEOUT);
    }

    /** This configuration with another {@code maxBatchSize}. */
    public ProducerConfig withMaxBatchSize(int n) {
        return new ProducerConfig(n, maxInFlight, serde, shutdownTimeout, maxBufferedMessages, maxBufferedBytes, bufferTimeout);
    }

    /** This configuration with another {@code maxInFlight}. */
    public ProducerConfig withMaxInFlight(int n) {
        return new ProducerConfig(maxBatchSize, n, serde, shutdownTimeout, maxBufferedMessages, maxBufferedBytes, bufferTimeout);
    }

    /** This configuration with another serde. */
    public ProducerConfig withSerde(Serde<?> s) {
        return new ProducerConfig(maxBatchSize, maxInFlight, s, shutdownTimeout, maxBufferedMessages, maxBufferedBytes, bufferTimeout);
    }

    /** This configuration with another {@code shutdownTimeout}. */
    public ProducerConfig withShutdownTimeout(Duration d) {
        return new ProducerConfig(maxBatchSize, maxInFlight, serde, d, maxBufferedMessages, maxBufferedBytes, bufferTimeout);
    }

    /** This configuration with another {@code maxBufferedMessages}. */
    public ProducerConfig withMaxBufferedMessages(int n) {
        return new ProducerConfig(maxBatchSize, maxInFlight, serde, shutdownTimeout, n, maxBufferedBytes, bufferTimeout);
    }

    /** This configuration with another {@code maxBufferedBytes}. */
    public ProducerConfig withMaxBufferedBytes(long bytes) {
        return new ProducerConfig(maxBatchSize, maxInFlight, serde, shutdownTimeout, maxBufferedMessages, bytes, bufferTimeout);
    }

    /** This configuration with another {@code bufferTimeout}. */
    public ProducerConfig withBufferTimeout(Duration d) {
        return new ProducerConfig(maxBatchSize, maxInFlight, serde, shutdownTimeout, maxBufferedMessages, maxBufferedBytes, d);
    }
}
