package dev.sluice;

/** What {@link Queue#cancel(long)} did. */
public enum Cancellation {
    /** The job was pending or waiting: it ended cancelled at once (its children follow their policy). */
    CANCELLED,
    /**
     * The job is running: it is flagged, its worker learns it at the next heartbeat or ack
     * ({@link JobHandle#cancelled()}), and it ends cancelled then, whatever the handler returns.
     */
    REQUESTED,
    /** The job had already ended (its run record or dead job says how); nothing changed. */
    ALREADY_ENDED
}
