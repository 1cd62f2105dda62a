package dev.sluice;

import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Per-message produce options. All fields are optional; {@link #NONE} sets none.
 *
 * @param idempotencyKey  a caller key: a second produce with the same key within the stream's
 *                        idempotency TTL writes nothing and returns the original id ({@code duplicate=true})
 * @param messageKey      ordering and compaction identity (a plain column until a group or compaction uses it)
 * @param routingKey      matched against consumer-group bindings
 * @param headers         small string map stored as {@code jsonb} (trace context goes here)
 * @param compactionRank  opt into compaction with this rank (needs a message key); the winner per key is the
 *                        highest (schema version, rank, id); {@code null} means not compacted
 * @param deliverAt       do not deliver before this instant (consumers treat it as a delay)
 */
public record ProduceOptions(String idempotencyKey, String messageKey, String routingKey, Map<String, String> headers,
                             Long compactionRank, Instant deliverAt) {

    /** No options. */
    public static final ProduceOptions NONE = new ProduceOptions(null, null, null, Map.of(), null, null);

    public ProduceOptions {
        headers = headers == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(headers));
    }

    /** A builder with nothing set. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder starting from these options. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.idempotencyKey = idempotencyKey;
        b.messageKey = messageKey;
        b.routingKey = routingKey;
        b.headers.putAll(headers);
        b.compactionRank = compactionRank;
        b.deliverAt = deliverAt;
        return b;
    }

    /** Options with only a message key. */
    public static ProduceOptions key(String messageKey) {
        return builder().messageKey(messageKey).build();
    }

    /** Options with only an idempotency key. */
    public static ProduceOptions idempotent(String idempotencyKey) {
        return builder().idempotencyKey(idempotencyKey).build();
    }

    /** Builds {@link ProduceOptions}. */
    public static final class Builder {
        private String idempotencyKey;
        private String messageKey;
        private String routingKey;
        private final Map<String, String> headers = new LinkedHashMap<>();
        private Long compactionRank;
        private Instant deliverAt;

        private Builder() {
        }

        /** Deduplicate by this key (1–256 characters). */
        public Builder idempotencyKey(String key) {
            this.idempotencyKey = key;
            return this;
        }

        /** The message key (1–256 characters). */
        public Builder messageKey(String key) {
            this.messageKey = key;
            return this;
        }

        /** The routing key (1–256 characters). */
        public Builder routingKey(String key) {
            this.routingKey = key;
            return this;
        }

        /** Adds a header (name 1–128 characters). */
        public Builder header(String name, String value) {
            this.headers.put(name, value);
            return this;
        }

        /** Replaces all headers. */
        public Builder headers(Map<String, String> headers) {
            this.headers.clear();
            if (headers != null) {
                this.headers.putAll(headers);
            }
            return this;
        }

        /** Opt into compaction with this rank (needs a message key). */
        public Builder compaction(long rank) {
            this.compactionRank = rank;
            return this;
        }

        /** Deliver no earlier than this instant. */
        public Builder deliverAt(Instant at) {
            this.deliverAt = at;
            return this;
        }

        public ProduceOptions build() {
            return new ProduceOptions(idempotencyKey, messageKey, routingKey, headers, compactionRank, deliverAt);
        }
    }
}
