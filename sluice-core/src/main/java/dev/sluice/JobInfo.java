package dev.sluice;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/**
 * A live job as stored (operator reads; the payload is left out, its size is given).
 *
 * @param id                  the job's id
 * @param queue               the queue's name
 * @param state               pending or processing
 * @param priority            higher runs first
 * @param runAt               not claimed before this instant
 * @param expiresAt           dropped to the dead jobs if still unclaimed then, or {@code null}
 * @param attempts            claims made so far
 * @param maxAttempts         claims allowed (stamped)
 * @param visibilityTimeout   the claim window without a heartbeat (stamped)
 * @param backoffBase         the first retry wait (stamped)
 * @param maxBackoff          the retry wait cap (stamped)
 * @param deadLetterRetention how long it is kept once dead (stamped)
 * @param workerId            the worker of the current or last claim, or {@code null}
 * @param claimedAt           when the current or last claim was made, or {@code null}
 * @param claimExpiresAt      when the current claim expires ({@code null} unless processing)
 * @param lastError           the last failure's text, or {@code null}
 * @param uniqueKey           the unique key, or {@code null}
 * @param headers             the headers (empty when none)
 * @param contentType         the payload's content type
 * @param payloadBytes        the payload's size in bytes
 * @param createdAt           when it was enqueued
 * @param updatedAt           when its row last changed
 */
public record JobInfo(long id, String queue, JobState state, int priority, Instant runAt, Instant expiresAt, int attempts,
                      int maxAttempts, Duration visibilityTimeout, Duration backoffBase, Duration maxBackoff,
                      Duration deadLetterRetention, String workerId, Instant claimedAt, Instant claimExpiresAt,
                      String lastError, String uniqueKey, Map<String, String> headers, String contentType, int payloadBytes,
                      Instant createdAt, Instant updatedAt) {
}
