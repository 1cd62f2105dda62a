package dev.sluice.internal.queue;

import java.time.Duration;
import java.time.Instant;

/**
 * A validated job, ready to insert: payload bytes, options resolved to database form, and the queue
 * options to stamp on the row.
 */
public record EncodedJob(byte[] payload, String contentType, String headersJson, int priority, Duration delay,
                         Instant runAt, Instant expiresAt, String uniqueKey, Stamps stamps) {

    /** The queue options stamped on the row, in nanoseconds as stored. */
    public record Stamps(long visibilityTimeoutNs, int maxAttempts, long backoffBaseNs, long backoffMaxNs,
                         long deadLetterRetentionNs) {
    }
}
