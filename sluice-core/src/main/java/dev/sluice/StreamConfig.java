package dev.sluice;

import java.time.Duration;
import java.util.Objects;

/**
 * A stream's configuration document. Declarations are whole: every field not set on the builder
 * takes its default, and the newest declaration wins (see {@link Stream#register(StreamConfig)}).
 *
 * @param partitionSize          ids per {@code message_log} partition (default 1,000,000); immutable after creation
 * @param retention              how long messages are kept: the janitor drops whole {@code message_log} partitions whose
 *                               messages are all older, that every consumer group has committed past (see
 *                               {@code allowDropPastCommitted}), that hold no exception row of any group, and that lie below
 *                               the head's partition; {@code null} keeps messages forever (default). The elected manager runs
 *                               the janitor (docs/maintenance.md)
 * @param allowDropPastCommitted whether retention may drop partitions some group has not committed yet (default false);
 *                               partitions holding exception rows (retries, dead letters) or open range leases are kept anyway
 * @param idempotencyKeyTtl      how long an idempotency key deduplicates produces (default 24 h). Enforced when producing
 *                               (an expired key is taken over by the next message with it); the janitor deletes expired key rows
 * @param emptyCompactionHeadTtl how long an idle compaction key row without a head stays before the janitor deletes it
 *                               (default 1 h)
 * @param deliveryLogMode        which delivery events are recorded (default {@link DeliveryLogMode#FAILURES})
 * @param maxPayloadBytes        largest accepted payload in bytes (default 1 MiB, at most 64 MiB)
 * @param deliveryLogRetention   how long rows of {@code delivery_log_<id>} are kept before the janitor deletes them
 *                               (default 7 days)
 */
public record StreamConfig(
        long partitionSize,
        Duration retention,
        boolean allowDropPastCommitted,
        Duration idempotencyKeyTtl,
        Duration emptyCompactionHeadTtl,
        DeliveryLogMode deliveryLogMode,
        int maxPayloadBytes,
        Duration deliveryLogRetention) {

    /** Default ids per partition. */
    public static final long DEFAULT_PARTITION_SIZE = 1_000_000L;
    /** Default idempotency-key TTL. */
    public static final Duration DEFAULT_IDEMPOTENCY_KEY_TTL = Duration.ofHours(24);
    /** Default TTL of an empty compaction head row. */
    public static final Duration DEFAULT_EMPTY_COMPACTION_HEAD_TTL = Duration.ofHours(1);
    /** Default retention of delivery-log rows. */
    public static final Duration DEFAULT_DELIVERY_LOG_RETENTION = Duration.ofDays(7);
    /** Default payload limit: 1 MiB. */
    public static final int DEFAULT_MAX_PAYLOAD_BYTES = 1 << 20;
    /** Largest payload limit a stream may set: 64 MiB. */
    public static final int MAX_MAX_PAYLOAD_BYTES = 64 << 20;

    public StreamConfig {
        Objects.requireNonNull(idempotencyKeyTtl, "idempotencyKeyTtl");
        Objects.requireNonNull(emptyCompactionHeadTtl, "emptyCompactionHeadTtl");
        Objects.requireNonNull(deliveryLogMode, "deliveryLogMode");
        Objects.requireNonNull(deliveryLogRetention, "deliveryLogRetention");
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
        if (deliveryLogRetention.isNegative() || deliveryLogRetention.isZero()) {
            throw invalid("deliveryLogRetention must be positive (got " + deliveryLogRetention + ")");
        }
        if (maxPayloadBytes < 1 || maxPayloadBytes > MAX_MAX_PAYLOAD_BYTES) {
            throw invalid("maxPayloadBytes must be between 1 and " + MAX_MAX_PAYLOAD_BYTES + " (got " + maxPayloadBytes + ")");
        }
        try {
            retention = retention == null ? null : Duration.ofNanos(retention.toNanos());
            idempotencyKeyTtl.toNanos();
            emptyCompactionHeadTtl.toNanos();
            deliveryLogRetention.toNanos();
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
                .maxPayloadBytes(maxPayloadBytes)
                .deliveryLogRetention(deliveryLogRetention);
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
        private Duration deliveryLogRetention = DEFAULT_DELIVERY_LOG_RETENTION;

        private Builder() {
        }

        /** Ids per partition of the log; fixed at creation. */
        public Builder partitionSize(long partitionSize) {
            this.partitionSize = partitionSize;
            return this;
        }

        /** Message retention; {@code null} keeps messages forever. The janitor drops whole partitions past it. */
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

        /** How long an empty compaction head row stays before the janitor deletes it. */
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

        /** How long delivery-log rows are kept before the janitor deletes them. */
        public Builder deliveryLogRetention(Duration retention) {
            this.deliveryLogRetention = retention;
            return this;
        }

        /** Validates and builds; bad values raise {@link ErrorCode#INVALID_CONFIG}. */
        public StreamConfig build() {
            return new StreamConfig(partitionSize, retention, allowDropPastCommitted, idempotencyKeyTtl,
                    emptyCompactionHeadTtl, deliveryLogMode, maxPayloadBytes, deliveryLogRetention);
        }
    }
}
