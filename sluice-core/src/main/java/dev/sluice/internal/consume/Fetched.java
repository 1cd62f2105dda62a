package dev.sluice.internal.consume;

import java.time.Instant;

/** A log row fetched for delivery, with whether compaction superseded it. */
record Fetched(long id, Instant createdAt, int schemaVersion, String contentType, String routingKey, String messageKey,
               Long compactionRank, String headersJson, String optionsJson, byte[] payload, boolean superseded) {
}
