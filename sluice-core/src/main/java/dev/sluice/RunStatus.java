package dev.sluice;

import java.util.Locale;

/**
 * Where a job's run stands ({@link JobRun#status()}): live (pending, waiting, running) or ended (succeeded,
 * discarded, dead, cancelled). Only ended runs leave a run record; the live ones are read from the job itself.
 */
public enum RunStatus {
    /** Enqueued, waiting to be claimed (possibly not due yet). */
    PENDING(false),
    /** Waiting for its parents ({@link EnqueueOptions#after()}). */
    WAITING(false),
    /** Claimed by a worker. */
    RUNNING(false),
    /** Its handler completed it ({@link JobHandle#ack()} or {@link JobHandle#complete(Object)}). */
    SUCCEEDED(true),
    /** Its handler failed it for good ({@link JobHandle#terminal(String)}); it is among the dead jobs. */
    DISCARDED(true),
    /** It used its last attempt, expired unclaimed or lost its last claim; it is among the dead jobs. */
    DEAD(true),
    /** Cancelled ({@link Queue#cancel(long)}, or a parent failed); the reason says which. */
    CANCELLED(true);

    private final boolean ended;

    RunStatus(boolean ended) {
        this.ended = ended;
    }

    /** Whether the run is over (a record exists when the job keeps runs or was awaited). */
    public boolean ended() {
        return ended;
    }

    /** The lower-case name, as stored, printed and accepted by the CLI and HTTP API. */
    public String dbValue() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The status named {@code value} (case-insensitive).
     *
     * @throws SluiceException {@link ErrorCode#INVALID_ARGUMENT} for any other value
     */
    public static RunStatus parse(String value) {
        if (value != null) {
            for (RunStatus s : values()) {
                if (s.dbValue().equalsIgnoreCase(value.trim())) {
                    return s;
                }
            }
        }
        throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "not a run status: '" + dev.sluice.internal.text.Echo.of(
                String.valueOf(value)) + "' (one of pending, waiting, running, succeeded, discarded, dead, cancelled)");
    }
}
