package dev.sluice.internal.consume;

/** The status an outcome writes to an exception row ({@code exception_queue_<id>.status}). */
enum RowStatus {
    /** Due again at {@code can_run_after} (a retry, a delay, a scheduled delivery). */
    READY("ready"),
    /** Waiting for its key (keyed policies); re-checks after a short pause or when woken. */
    DEFERRED("deferred"),
    /** Out of attempts or terminal: a dead letter. */
    DEAD("dead");

    private final String sqlValue;

    RowStatus(String sqlValue) {
        this.sqlValue = sqlValue;
    }

    /** The column's text. */
    String sqlValue() {
        return sqlValue;
    }
}
