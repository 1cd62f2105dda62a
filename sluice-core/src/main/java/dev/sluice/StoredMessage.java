package dev.sluice;

import java.time.Instant;
import java.util.Map;

/**
 * A message as stored in a stream's log, for operators and simple readers ({@link Stream#read}).
 *
 * @param id             position in the log
 * @param createdAt      when its producing statement ran
 * @param schemaVersion  the payload type's schema version
 * @param contentType    the serde's content type
 * @param routingKey     routing key or {@code null}
 * @param messageKey     message key or {@code null}
 * @param compactionRank compaction rank, or {@code null} when not compacted
 * @param headers        headers (empty when none)
 * @param deliverAt      requested earliest delivery, or {@code null}
 * @param payload        the exact stored bytes
 */
public record StoredMessage(long id, Instant createdAt, int schemaVersion, String contentType, String routingKey,
                            String messageKey, Long compactionRank, Map<String, String> headers, Instant deliverAt,
                            byte[] payload) {
}
