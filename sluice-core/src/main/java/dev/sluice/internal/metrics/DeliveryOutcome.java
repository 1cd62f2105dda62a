package dev.sluice.internal.metrics;

/**
 * What one delivery of a stream message became, as the {@code outcome} tag of {@code sluice.deliveries}: the
 * handler's outcome as the consumer decided it (a retry on the message's last attempt makes a dead letter, so it is
 * {@link #TERMINAL}, as is a payload that does not decode).
 */
public enum DeliveryOutcome {
    /** The handler succeeded. */
    SUCCESS("success"),
    /** Delivered again after a backoff. */
    RETRY("retry"),
    /** A dead letter: {@code terminal(reason)}, a retry past the last attempt, or an undecodable payload. */
    TERMINAL("terminal"),
    /** Delivered again after the handler's delay (not an attempt). */
    DELAY("delay");

    private final String tag;

    DeliveryOutcome(String tag) {
        this.tag = tag;
    }

    /** The tag value. */
    public String tag() {
        return tag;
    }
}
