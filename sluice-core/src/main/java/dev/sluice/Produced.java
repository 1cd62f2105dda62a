package dev.sluice;

/**
 * The result of producing one message.
 *
 * @param id        the message's position in the stream's log; for a duplicate, the id of the original message
 * @param duplicate whether an earlier message with the same idempotency key (within its TTL) made this a no-op
 */
public record Produced(long id, boolean duplicate) {
}
