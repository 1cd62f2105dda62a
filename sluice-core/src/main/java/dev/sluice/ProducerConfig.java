package dev.sluice;

import java.time.Duration;
import java.util.Objects;

/**
 * Options of one in-process {@link Producer}: its batcher and its serde.
 *
 * @param maxBatchSize     most messages one shared transaction carries (default 256)
 * @param maxInFlight      most batch transactions open at once (default 2); while they run, new calls queue and
 *                         form the next batch — batch size grows with load, there is no linger timer
 * @param serde            payload serde; {@code null} means the default for the payload type
 * @param shutdownTimeout  how long {@link Producer#close()} waits for queued messages (default 15 s)
 */
public record ProducerConfig(int maxBatchSize, int maxInFlight, Serde<?> serde, Duration shutdownTimeout) {
    public static final int DEFAULT_MAX_BATCH_SIZE = 256;
    public static final int DEFAULT_MAX_IN_FLIGHT = 2;

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
    }

    /** The defaults. */
    public static ProducerConfig defaults() {
        return new ProducerConfig(DEFAULT_MAX_BATCH_SIZE, DEFAULT_MAX_IN_FLIGHT, null, Duration.ofSeconds(15));
    }

    public ProducerConfig withMaxBatchSize(int n) {
        return new ProducerConfig(n, maxInFlight, serde, shutdownTimeout);
    }

    public ProducerConfig withMaxInFlight(int n) {
        return new ProducerConfig(maxBatchSize, n, serde, shutdownTimeout);
    }

    public ProducerConfig withSerde(Serde<?> s) {
        return new ProducerConfig(maxBatchSize, maxInFlight, s, shutdownTimeout);
    }

    public ProducerConfig withShutdownTimeout(Duration d) {
        return new ProducerConfig(maxBatchSize, maxInFlight, serde, d);
    }
}
