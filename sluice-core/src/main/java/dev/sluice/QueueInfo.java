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
 */
public record QueueInfo(String name, long pending, long scheduled, long processing, long dead) {

    /** The same counts as {@link Queue#stats()} gives for this queue. */
    public QueueStats stats() {
        return new QueueStats(pending, scheduled, processing, dead);
    }
}
