package dev.sluice;

import java.time.Duration;
import java.util.Objects;

/**
 * A stream's configuration document. Declarations are whole: every field not set on the builder
 * takes its default, and the newest declaration wins (see {@link Stream#register(StreamConfig)}).
 *
 * @param partitionSize          ids per {@code message_log} partition (default 1,000,000); immutable after creation
 * @param retention              how long messages are kept before the janitor may drop their partition; {@code null} keeps them forever
 *                               (default). <b>Not enforced yet:</b> the janitor has not landed, so the value is stored and shown
 *                               ({@code sluice stream get} says "not enforced yet") but nothing drops old messages
 * @param allowDropPastCommitted whether retention may drop partitions some group has not committed yet (default false);
 *                               like retention, it takes effect with the janitor
 * @param idempotencyKeyTtl      how long an idempotency key deduplicates produces (default 24 h). Enforced when producing
 *                               (an expired key is taken over by the next message with it); the sweep of expired key rows
 *                               comes with the janitor, so until then they stay stored
 * @param emptyCompactionHeadTtl how long an idle compaction key row without a head stays before it is swept (default 1 h).
 *                               <b>Not enforced yet:</b> the sweep comes with the janitor
 * @param deliveryLogMode        which delivery events are recorded (default {@link DeliveryLogMode#FAILURES})
 * @param maxPayloadBytes        largest accepted payload in bytes (default 1 MiB, at most 64 MiB)
 */
public record StreamConfig(
        long partitionSize,
        Duration retention,
        boolean allowDropPastCommitted,
        Duration idempotencyKeyTtl,
        Duration emptyCompactionHeadTtl,
        DeliveryLogMode deliveryLogMode,
        int maxPayloadBytes) {

    /** Default ids per partition. */
    public static final long DEFAULT_PARTITION_SIZE = 1_000_000L;
    /** Default idempotency-key TTL. */
    public static final Duration DEFAULT_IDEMPOTENCY_KEY_TTL = Duration.ofHours(24);
    /** Default TTL of an empty compaction head row. */
    public static final Duration DEFAULT_EMPTY_COMPACTION_HEAD_TTL = Duration.ofHours(1);
    /** Default payload limit: 1 MiB. */
    public static final int DEFAULT_MAX_PAYLOAD_BYTES = 1 << 20;
    /** Largest payload limit a stream may set: 64 MiB. */
    public static final int MAX_MAX_PAYLOAD_BYTES = 64 << 20;

    public StreamConfig {
        Objects.requireNonNull(idempotencyKeyTtl, "idempotencyKeyTtl");
        Objects.requireNonNull(emptyCompactionHeadTtl, "emptyCompactionHeadTtl");
        Objects.requireNonNull(deliveryLogMode, "deliveryLogMode");
        if (partitionSize < 1) {
            throw invalid("partitionSize must be at least 1 (got " + partitionSize + ")");
        }
        if (retention != null && (retention.isNegative() || retention.isZero())) {
            throw invalid("retention must be positive, or null to keep messages forever (got " + retention + ")");
        }
        if (idempotencyKeyTtl.isNegative() || idempotencyKeyTtl.isZero()) {
            throw invalid("idempotencyKeyTtl must be positive (got " + idempotencyKeyTtl + ")");
        }
        if (emptyCompactionHeadTtl.isNegative() || emptyCompactionHeadTtl.isZero()) {
            throw invalid("emptyCompactionHeadTtl must be positive (got " + emptyCompactionHeadTtl + ")");
        }
        if (maxPayloadBytes < 1 || maxPayloadBytes > MAX_MAX_PAYLOAD_BYTES) {
            throw invalid("maxPayloadBytes must be between 1 and " + MAX_MAX_PAYLOAD_BYTES + " (got " + maxPayloadBytes + ")");
        }
        try {
            retention = retention == null ? null : Duration.ofNanos(retention.toNanos());
            idempotencyKeyTtl.toNanos();
            emptyCompactionHeadTtl.toNanos();
        } catch (ArithmeticException e) {
            throw invalid("durations must fit in a 64-bit count of nanoseconds (about 292 years)");
        }
    }

    private static SluiceException invalid(String problem) {
        return new SluiceException(ErrorCode.INVALID_CONFIG, problem);
    }

    /** The default configuration. */
    public static StreamConfig defaults() {
        return builder().build();
    }

    /** A builder starting from the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder starting from this configuration. */
    public Builder toBuilder() {
        return new Builder()
                .partitionSize(partitionSize)
                .retention(retention)
                .allowDropPastCommitted(allowDropPastCommitted)
                .idempotencyKeyTtl(idempotencyKeyTtl)
                .emptyCompactionHeadTtl(emptyCompactionHeadTtl)
                .deliveryLogMode(deliveryLogMode)
                .maxPayloadBytes(maxPayloadBytes);
    }

    /** Builds a {@link StreamConfig}; unset fields take their defaults. */
    public static final class Builder {
        private long partitionSize = DEFAULT_PARTITION_SIZE;
        private Duration retention;
        private boolean allowDropPastCommitted;
        private Duration idempotencyKeyTtl = DEFAULT_IDEMPOTENCY_KEY_TTL;
        private Duration emptyCompactionHeadTtl = DEFAULT_EMPTY_COMPACTION_HEAD_TTL;
        private DeliveryLogMode deliveryLogMode = DeliveryLogMode.FAILURES;
        private int maxPayloadBytes = DEFAULT_MAX_PAYLOAD_BYTES;

        private Builder() {
        }

        /** Ids per partition of the log; fixed at creation. */
        public Builder partitionSize(long partitionSize) {
            this.partitionSize = partitionSize;
            return this;
        }

        /** Message retention; {@code null} keeps messages forever. Stored, not enforced until the janitor lands. */
        public Builder retention(Duration retention) {
            this.retention = retention;
            return this;
        }

        /** Whether retention may drop partitions some group has not committed. */
        public Builder allowDropPastCommitted(boolean allow) {
            this.allowDropPastCommitted = allow;
            return this;
        }

        /** How long idempotency keys deduplicate. */
        public Builder idempotencyKeyTtl(Duration ttl) {
            this.idempotencyKeyTtl = ttl;
            return this;
        }

        /** How long an empty compaction head row stays. Stored, not enforced until the janitor lands. */
        public Builder emptyCompactionHeadTtl(Duration ttl) {
            this.emptyCompactionHeadTtl = ttl;
            return this;
        }

        /** Which delivery events are recorded. */
        public Builder deliveryLogMode(DeliveryLogMode mode) {
            this.deliveryLogMode = mode;
            return this;
        }

        /** The payload size limit in bytes. */
        public Builder maxPayloadBytes(int bytes) {
            this.maxPayloadBytes = bytes;
            return this;
        }

        /** Validates and builds; bad values raise {@link ErrorCode#INVALID_CONFIG}. */
        public StreamConfig build() {
            return new StreamConfig(partitionSize, retention, allowDropPastCommitted, idempotencyKeyTtl,
                    emptyCompactionHeadTtl, deliveryLogMode, maxPayloadBytes);
        }
    }
}
