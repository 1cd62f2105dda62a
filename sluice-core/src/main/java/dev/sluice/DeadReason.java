package dev.sluice;

/** Why a job was moved to the dead jobs ({@code job_dead.reason}). */
public enum DeadReason {
    /** It used its last attempt and failed (or asked to be retried). */
    FAILED("failed"),
    /** It was still unclaimed at its {@code expiresAt}. */
    EXPIRED("expired"),
    /** Its last attempt's claim expired without a heartbeat (the worker crashed or stalled). */
    CLAIM_EXPIRED("claim_expired"),
    /** A handler discarded it ({@link JobHandle#discard(String)}), or its payload could not be decoded. */
    DISCARDED("discarded");

    private final String dbValue;

    DeadReason(String dbValue) {
        this.dbValue = dbValue;
    }

    /** The value stored in {@code job_dead.reason}. */
    public String dbValue() {
        return dbValue;
    }

    /** The reason stored as {@code value}. */
    public static DeadReason fromDb(String value) {
        for (DeadReason r : values()) {
            if (r.dbValue.equals(value)) {
                return r;
            }
        }
        throw new IllegalArgumentException("unknown dead reason: " + value);
    }
}
