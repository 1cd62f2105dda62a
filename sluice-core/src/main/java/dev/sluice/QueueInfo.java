package dev.sluice;

/**
 * One queue of the schema with its job counts ({@link Sluice#queues()}). Queues are rows, not a registry:
 * a queue is listed while it has live or dead jobs. Counted from the rows, so an operator read.
 *
 * @param name       the queue's name
 * @param pending    jobs waiting to be claimed, due or not
 * @param scheduled  the part of {@code pending} not due yet ({@code run_at} in the future)
 * @param processing jobs claimed by a worker
 * @param dead       dead jobs not yet swept by retention
 * @param waiting    jobs waiting for their parents, not claimable yet
 */
public record QueueInfo(String name, long pending, long scheduled, long processing, long dead, long waiting) {
    /** Counts without waiting jobs (the form before dependencies existed). */
    public QueueInfo(String name, long pending, long scheduled, long processing, long dead) {
        this(name, pending, scheduled, processing, dead, 0);
    }

    /** The same counts as {@link Queue#stats()} gives for this queue. */
    public QueueStats stats() {
        return new QueueStats(pending, scheduled, processing, dead, waiting);
    }
}
