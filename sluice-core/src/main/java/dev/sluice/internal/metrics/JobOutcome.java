package dev.sluice.internal.metrics;

/** How one claimed job ended its attempt, as the {@code outcome} tag of {@code sluice.jobs}. */
public enum JobOutcome {
    /** Acknowledged (an explicit ack or complete, or the worker's ack after the handler returned). */
    ACK("ack"),
    /** {@code retry()} or {@code retry(delay)}: pending again. */
    RETRY("retry"),
    /** {@code fail(...)} or a thrown exception with attempts left: pending again after the backoff. */
    FAIL("fail"),
    /** {@code fail(...)} or a thrown exception on the last attempt: a dead job. */
    DEAD("dead"),
    /** {@code terminal(reason)} or an undecodable payload: a dead job at once. */
    TERMINAL("terminal"),
    /** The job had been cancelled by an operator: its end recorded it as cancelled. */
    CANCELLED("cancelled"),
    /** The claim was lost (expired or taken over): the end changed nothing. */
    LOST("lost");

    private final String tag;

    JobOutcome(String tag) {
        this.tag = tag;
    }

    /** The tag value. */
    public String tag() {
        return tag;
    }
}
