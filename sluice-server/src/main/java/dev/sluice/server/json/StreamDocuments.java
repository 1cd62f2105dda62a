package dev.sluice.server.json;

import dev.sluice.DeadLetter;
import dev.sluice.GroupInfo;
import dev.sluice.MetricSnapshot;
import dev.sluice.PartitionInfo;
import dev.sluice.StoredMessage;
import dev.sluice.StreamConfig;
import dev.sluice.StreamInfo;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The JSON documents of streams, groups and messages: one shape for the HTTP API and the CLI's
 * {@code -o json} (snake_case fields, instants and durations as ISO-8601 text).
 */
public final class StreamDocuments {
    private StreamDocuments() {
    }

    /** A stream with its config. */
    public static Map<String, Object> stream(StreamInfo s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", s.id());
        m.put("name", s.name());
        m.put("config", config(s.config()));
        m.put("family_version", s.familyVersion());
        m.put("created_at", Texts.text(s.createdAt()));
        m.put("updated_at", Texts.text(s.updatedAt()));
        return m;
    }

    /** A stream's config document (what {@code PUT /api/v1/streams/{name}} takes back). */
    public static Map<String, Object> config(StreamConfig c) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("partition_size", c.partitionSize());
        m.put("retention", Texts.text(c.retention()));
        m.put("allow_drop_past_committed", c.allowDropPastCommitted());
        m.put("idempotency_key_ttl", c.idempotencyKeyTtl().toString());
        m.put("empty_compaction_head_ttl", c.emptyCompactionHeadTtl().toString());
        m.put("delivery_log_mode", c.deliveryLogMode().sqlValue());
        m.put("max_payload_bytes", c.maxPayloadBytes());
        m.put("delivery_log_retention", c.deliveryLogRetention().toString());
        return m;
    }

    /** A consumer group with its cursor, lag and exception counts. */
    public static Map<String, Object> group(GroupInfo g) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", g.id());
        m.put("stream", g.stream());
        m.put("name", g.name());
        m.put("claimed", g.claimed());
        m.put("committed", g.committed());
        m.put("head", g.head());
        m.put("lag", g.lag());
        m.put("ready", g.ready());
        m.put("deferred", g.deferred());
        m.put("inflight", g.inflight());
        m.put("dead", g.dead());
        m.put("open_ranges", g.openRanges());
        m.put("concurrency", g.config().concurrency().sqlValue());
        m.put("partitions", g.config().partitions());
        m.put("bindings", g.config().bindings());
        m.put("max_attempts", g.config().retry().maxAttempts());
        m.put("dead_letter_retention", g.config().deadLetterRetention().toString());
        m.put("created_at", Texts.text(g.createdAt()));
        return m;
    }

    /** One bucket of a partitioned group. */
    public static Map<String, Object> bucket(PartitionInfo p) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("bucket", p.bucket());
        m.put("position", p.position());
        m.put("lag", p.lag());
        m.put("owner_instance_id", p.ownerInstanceId() == 0 ? null : p.ownerInstanceId());
        m.put("holder", p.holder());
        m.put("lease_expires_at", Texts.text(p.leaseExpiresAt()));
        m.put("heartbeat_at", Texts.text(p.heartbeatAt()));
        return m;
    }

    /** A dead letter (its message id, attempts and last error). */
    public static Map<String, Object> deadLetter(DeadLetter d) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("message_id", d.messageId());
        m.put("message_key", d.messageKey());
        m.put("attempts", d.attempts());
        m.put("delays", d.delays());
        m.put("last_error", d.lastError());
        m.put("dead_at", Texts.text(d.deadAt()));
        return m;
    }

    /** A stored message; the payload as base64 always, and as text too when it is printable UTF-8. */
    public static Map<String, Object> message(StoredMessage s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", s.id());
        m.put("created_at", Texts.text(s.createdAt()));
        m.put("schema_version", s.schemaVersion());
        m.put("content_type", s.contentType());
        m.put("message_key", s.messageKey());
        m.put("routing_key", s.routingKey());
        m.put("compaction_rank", s.compactionRank());
        m.put("headers", s.headers());
        m.put("deliver_at", Texts.text(s.deliverAt()));
        payload(m, s.payload());
        return m;
    }

    /** Adds {@code payload_bytes}, {@code payload_base64} and (when printable) {@code payload_text}. */
    public static void payload(Map<String, Object> m, byte[] payload) {
        m.put("payload_bytes", payload == null ? null : payload.length);
        m.put("payload_base64", payload == null ? null : Base64.getEncoder().encodeToString(payload));
        String text = Texts.printable(payload);
        if (text != null) {
            m.put("payload_text", text);
        }
    }

    /** A metric snapshot the manager took. */
    public static Map<String, Object> metric(MetricSnapshot s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("kind", s.kind());
        m.put("name", s.name());
        m.put("taken_at", Texts.text(s.takenAt()));
        m.put("head", s.head());
        m.put("committed", s.committed());
        m.put("lag", s.lag());
        m.put("backlog", s.backlog());
        m.put("retrying", s.retrying());
        m.put("dead", s.dead());
        m.put("pending", s.pending());
        m.put("processing", s.processing());
        m.put("rate_per_second", s.ratePerSecond());
        return m;
    }
}
