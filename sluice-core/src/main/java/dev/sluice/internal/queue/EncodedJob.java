package dev.sluice.internal.queue;

import java.time.Duration;
import java.time.Instant;

/**
 * A validated job, ready to insert: payload bytes, options resolved to database form, and the queue
 * options to stamp on the row. {@code after} holds the distinct parent ids in ascending order (empty for none);
 * {@code onParentFailure} is the stored policy ({@code cancel} or {@code run}).
 */
public record EncodedJob(byte[] payload, String contentType, String headersJson, int priority, Duration delay,
                         Instant runAt, Instant expiresAt, String uniqueKey, Stamps stamps, long[] after,
                         String onParentFailure) {

    /** Whether the job waits for parents. */
    boolean hasParents() {
        return after.length > 0;
    }

    /**
     * The queue options stamped on the row, in nanoseconds as stored; {@code keepRunsNs} and {@code keepEventsNs}
     * are null when the queue keeps no runs.
     */
    public record Stamps(long visibilityTimeoutNs, int maxAttempts, long backoffBaseNs, long backoffMaxNs,
                         long deadLetterRetentionNs, Long keepRunsNs, Long keepEventsNs) {
        /** The first event's sequence number: 1 when the job keeps runs (its enqueued event), else 0. */
        int firstSeq() {
            return keepRunsNs == null ? 0 : 1;
        }
    }
}
