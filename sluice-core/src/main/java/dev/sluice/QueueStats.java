package dev.sluice;

/**
 * Job counts of one queue ({@link Queue#stats()}; counted from the rows, so an operator read, not a
 * hot-path call).
 *
 * @param pending    jobs waiting to be claimed, due or not
 * @param scheduled  the part of {@code pending} not due yet
 * @param processing jobs claimed by a worker
 * @param dead       dead jobs not yet swept by retention
 * @param waiting    jobs waiting for their parents ({@link EnqueueOptions#after()}), not claimable yet
 */
public record QueueStats(long pending, long scheduled, long processing, long dead, long waiting) {
    /** Counts without waiting jobs (the form before dependencies existed). */
    public QueueStats(long pending, long scheduled, long processing, long dead) {
        this(pending, scheduled, processing, dead, 0);
    }
}
