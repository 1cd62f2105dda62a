package dev.sluice;

import java.time.Instant;

/**
 * A dead letter of a consumer group (the payload stays in the log; read it by id).
 *
 * @param messageId  the message's id
 * @param messageKey its key or {@code null}
 * @param attempts   deliveries made
 * @param delays     delays taken
 * @param lastError  the last error text, the terminal reason, or "expired: …" when its last delivery's lease ran out
 *                   before its handler finished (cleaned: see {@link Outcome#terminal(String)})
 * @param errorStack the last error's stack trace, when a handler threw
 * @param createdAt  when the message first left the mainline path
 * @param deadAt     when it became dead
 */
public record DeadLetter(long messageId, String messageKey, int attempts, int delays, String lastError, String errorStack,
                         Instant createdAt, Instant deadAt) {
}
