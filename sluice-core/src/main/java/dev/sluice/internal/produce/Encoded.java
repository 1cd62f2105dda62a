package dev.sluice.internal.produce;

import java.util.UUID;

/** A validated message, ready to insert: everything the log row needs, already in database form. */
public record Encoded(byte[] payload, String contentType, int schemaVersion, String messageKey, String routingKey,
                      String headersJson, String optionsJson, Long compactionRank, UUID idempotencyKey) {

    /** Whether this message needs the keyed/compacted statement. */
    boolean needsFullPath() {
        return idempotencyKey != null || compactionRank != null;
    }
}
