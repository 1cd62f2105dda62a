package dev.sluice.internal.produce;

import java.util.UUID;

/** A validated message, ready to insert: everything the log row needs, already in database form. */
public record Encoded(byte[] payload, String contentType, int schemaVersion, String messageKey, String routingKey,
                      String headersJson, String optionsJson, Long compactionRank, UUID idempotencyKey) {

    /** Whether this message needs the keyed/compacted statement. */
    boolean needsFullPath() {
        return idempotencyKey != null || compactionRank != null;
    }

    /**
     * What this message weighs in the producer's buffer: its payload plus its text fields (two bytes
     * a character, as held in memory) plus a fixed overhead for the objects around it.
     */
    long bufferedBytes() {
        return 64L + payload.length + 2L * (length(contentType) + length(messageKey) + length(routingKey)
                + length(headersJson) + length(optionsJson));
    }

    private static int length(String s) {
        return s == null ? 0 : s.length();
    }
}
