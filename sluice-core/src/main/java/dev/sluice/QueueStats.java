package dev.sluice;

/**
 * Job counts of one queue ({@link Queue#stats()}; counted from the rows, so an operator read, not a
 * hot-path call).
 *
 * @param pending    jobs waiting to be claimed, due or not
 * @param scheduled  the part of {@code pending} not due yet
 * @param processing jobs claimed by a worker
 * @param dead       dead jobs not yet swept by retention
 */
public record QueueStats(long pending, long scheduled, long processing, long dead) {
}
