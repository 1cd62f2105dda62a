package dev.sluice.internal.produce;

import dev.sluice.internal.schema.FamilyTables;

/**
 * A stream resolved for producing: its id (and so its tables), and the settings the produce path
 * needs. Resolved once per producer and cached; a destroyed stream is noticed on the next insert.
 */
public record StreamTarget(long id, String name, long partitionSize, int maxPayloadBytes, long idempotencyKeyTtlNanos,
                           FamilyTables tables, String notifyChannel) {
}
