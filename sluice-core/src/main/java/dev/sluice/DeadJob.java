package dev.sluice;

import java.time.Instant;
import java.util.Map;

/**
 * A dead job (operator reads; the payload is kept for {@link Queue#revive(long)} but left out here).
 *
 * @param id           the job's id (revive keeps it)
 * @param queue        the queue's name
 * @param reason       why it died
 * @param lastError    the last error text (or the discard reason), or {@code null}
 * @param attempts     claims it used
 * @param maxAttempts  claims it was allowed (stamped)
 * @param priority     its priority
 * @param uniqueKey    its unique key, or {@code null}
 * @param headers      its headers (empty when none)
 * @param workerId     the worker of its last claim, or {@code null}
 * @param payloadBytes the payload's size in bytes
 * @param createdAt    when it was enqueued
 * @param diedAt       when it died
 * @param purgeAfter   when the retention sweep may delete it
 */
public record DeadJob(long id, String queue, DeadReason reason, String lastError, int attempts, int maxAttempts, int priority,
                      String uniqueKey, Map<String, String> headers, String workerId, int payloadBytes, Instant createdAt,
                      Instant diedAt, Instant purgeAfter) {
}
