package dev.sluice.internal.catalog;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.DeliveryLogMode;
import dev.sluice.StreamConfig;
import dev.sluice.StreamInfo;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/** Mapping between {@link StreamConfig}/{@link StreamInfo} and {@code stream_config} rows. */
final class StreamRows {
    private static final ObjectMapper JSON = new ObjectMapper();

    private StreamRows() {
    }

    static StreamInfo info(ResultSet rs) throws SQLException {
        long retentionNs = rs.getLong("retention_ttl_ns");
        Duration retention = rs.wasNull() ? null : Duration.ofNanos(retentionNs);
        StreamConfig config = StreamConfig.builder()
                .partitionSize(rs.getLong("partition_size"))
                .retention(retention)
                .allowDropPastCommitted(rs.getBoolean("allow_drop_past_committed"))
                .idempotencyKeyTtl(Duration.ofNanos(rs.getLong("idempotency_key_ttl_ns")))
                .emptyCompactionHeadTtl(Duration.ofNanos(rs.getLong("empty_compaction_head_ttl_ns")))
                .deliveryLogMode(DeliveryLogMode.parse(rs.getString("delivery_log_mode")))
                .maxPayloadBytes(rs.getInt("max_payload_bytes"))
                .deliveryLogRetention(durationOr(rs.getString("delivery_log_retention"),
                        StreamConfig.DEFAULT_DELIVERY_LOG_RETENTION))
                .build();
        return new StreamInfo(rs.getLong("id"), rs.getString("name"), config, rs.getInt("family_version"),
                rs.getTimestamp("created_at").toInstant(), rs.getTimestamp("updated_at").toInstant());
    }

    /** An ISO-8601 duration from the stored document, or {@code fallback} when the document has none (older documents). */
    private static Duration durationOr(String iso, Duration fallback) {
        return iso == null ? fallback : Duration.parse(iso);
    }

    /** Binds the seven config columns and the config document starting at {@code index}; returns the next index. */
    static int bindConfig(PreparedStatement ps, int index, StreamConfig config) throws SQLException {
        ps.setLong(index++, config.partitionSize());
        if (config.retention() == null) {
            ps.setNull(index++, java.sql.Types.BIGINT);
        } else {
            ps.setLong(index++, config.retention().toNanos());
        }
        ps.setBoolean(index++, config.allowDropPastCommitted());
        ps.setLong(index++, config.idempotencyKeyTtl().toNanos());
        ps.setLong(index++, config.emptyCompactionHeadTtl().toNanos());
        ps.setString(index++, config.deliveryLogMode().sqlValue());
        ps.setInt(index++, config.maxPayloadBytes());
        ps.setString(index++, json(config));
        return index;
    }

    /** The declared document as stored in {@code config} and in the log (durations as ISO-8601). */
    static String json(StreamConfig config) {
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("partition_size", config.partitionSize());
        doc.put("retention", config.retention() == null ? null : config.retention().toString());
        doc.put("allow_drop_past_committed", config.allowDropPastCommitted());
        doc.put("idempotency_key_ttl", config.idempotencyKeyTtl().toString());
        doc.put("empty_compaction_head_ttl", config.emptyCompactionHeadTtl().toString());
        doc.put("delivery_log_mode", config.deliveryLogMode().sqlValue());
        doc.put("max_payload_bytes", config.maxPayloadBytes());
        doc.put("delivery_log_retention", config.deliveryLogRetention().toString());
        try {
            return JSON.writeValueAsString(doc);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
