package dev.sluice;

/** The state of a live job (dead jobs live in their own table; see {@link DeadJob}). */
public enum JobState {
    /** Waiting to be claimed (possibly not due yet: {@code run_at} in the future). */
    PENDING,
    /** Claimed by a worker until its claim expires. */
    PROCESSING,
    /** Waiting for its parents ({@link EnqueueOptions#after()}): not claimable until every parent succeeded. */
    WAITING;

    /** The value stored in {@code job.state}. */
    public String dbValue() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
