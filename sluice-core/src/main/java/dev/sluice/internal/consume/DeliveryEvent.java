package dev.sluice.internal.consume;

import dev.sluice.DeliveryLogMode;

/** An event of the delivery log ({@code delivery_log_<id>.status}) written by the consumer. */
enum DeliveryEvent {
    SUCCESS("success"),
    /** A retry was scheduled. */
    FAILED("failed"),
    /** The handler asked for a delay. */
    DELAYED("delayed"),
    DEAD("dead"),
    /** The message waits for its key. */
    DEFERRED("deferred");

    private final String sqlValue;

    DeliveryEvent(String sqlValue) {
        this.sqlValue = sqlValue;
    }

    /** The column's text. */
    String sqlValue() {
        return sqlValue;
    }

    /** Whether a group with this delivery-log mode records the event: all of them, or failures only. */
    boolean loggedUnder(DeliveryLogMode mode) {
        return mode == DeliveryLogMode.ALL || (mode == DeliveryLogMode.FAILURES && this != SUCCESS && this != DEFERRED);
    }
}
