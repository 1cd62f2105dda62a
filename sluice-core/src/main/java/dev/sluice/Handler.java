package dev.sluice;

/**
 * Handles one message of a consumer group. Return an {@link Outcome}; throwing means
 * {@link Outcome#retry()} (the exception's text and stack are kept for the dead letter).
 * Handlers run without a database connection held and may run again (at-least-once).
 */
@FunctionalInterface
public interface Handler<T> {
    Outcome handle(Message<T> message) throws Exception;
}
