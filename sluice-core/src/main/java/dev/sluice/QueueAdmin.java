package dev.sluice;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The operator actions of a queue ({@code queue.admin()}): maintenance, inspection and dead letters, named
 * as on the stream side ({@link GroupAdmin}). Work (enqueue, claim, work) stays on {@link Queue}.
 */
public final class QueueAdmin {
    private final Queue<?> queue;

    QueueAdmin(Queue<?> queue) {
        this.queue = Objects.requireNonNull(queue, "queue");
    }

    /** See {@link Queue#maintain()}. */
    public QueueMaintenanceReport maintain() {
        return queue.maintain();
    }

    /** The live job with this id in this queue, or empty. */
    public Optional<JobInfo> job(long id) {
        return queue.job(id);
    }

    /** Live jobs of one state, a page at a time (limit 1 to 1000). */
    public Page<JobInfo> jobs(JobState state, String cursor, int limit) {
        return queue.jobs(state, cursor, limit);
    }

    /** Pending (and not-yet-due), processing and dead counts of the queue. */
    public QueueStats stats() {
        return queue.stats();
    }

    /** Dead letters (dead jobs) in id order, a page at a time; pass the previous page's {@code next} (or null). */
    public Page<DeadJob> deadLetters(String cursor, int limit) {
        return queue.dead(cursor, limit);
    }

    /** Moves one dead letter back to pending, due now, attempts reset; false when there is none with this id. */
    public boolean redrive(long jobId) {
        return queue.revive(jobId);
    }

    /** Redrives these dead letters together, all or none ({@link ErrorCode#JOB_NOT_FOUND} for a stranger). */
    public int redrive(List<Long> jobIds) {
        return queue.revive(jobIds);
    }

    /** Deletes these dead letters; returns how many. */
    public int purge(List<Long> jobIds) {
        return queue.purgeDead(jobIds);
    }

    /** Deletes every dead letter of the queue; returns how many. */
    public int purgeAll() {
        return queue.purgeDead();
    }

    @Override
    public String toString() {
        return "QueueAdmin[" + queue.name() + "]";
    }
}
