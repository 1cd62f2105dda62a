package dev.sluice;

import dev.sluice.internal.catalog.Names;
import dev.sluice.internal.queue.JobStore;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The operator actions of a queue ({@code queue.admin()}): maintenance, inspection and dead letters, named
 * as on the stream side ({@link GroupAdmin}). Work (enqueue, claim, work) stays on {@link Queue}. Creating
 * the handle does no I/O.
 *
 * <p>Id lists follow the same rules as on {@link GroupAdmin}: a null list or a null id is
 * {@link ErrorCode#INVALID_QUEUE_OPTIONS}, at most 10,000 ids, repeats count once, an empty list does nothing
 * and returns 0, and an id that is not a dead letter of the queue rejects the whole list
 * ({@link ErrorCode#JOB_NOT_FOUND}, nothing changed).
 */
public final class QueueAdmin {
    private static final int MAX_PAGE = 1_000;

    private final Queue<?> queue;

    QueueAdmin(Queue<?> queue) {
        this.queue = Objects.requireNonNull(queue, "queue");
    }

    private JobStore store() {
        return queue.store();
    }

    private String name() {
        return queue.name();
    }

    /**
     * Runs one maintenance tick over <b>every queue of the schema</b> (jobs carry their own stamped options,
     * and a queue nobody works on must still have its expired jobs moved): expired claims go back to pending
     * after the backoff (or to the dead letters when it was their last attempt), unclaimed jobs past their
     * {@code expiresAt} go to the dead letters, and dead letters past their retention are deleted — each in
     * bounded batches with {@code SKIP LOCKED}, so any number of processes may run it at once. Workers run it
     * by themselves.
     */
    public QueueMaintenanceReport maintain() {
        return store().maintain();
    }

    /** The live job with this id in this queue, or empty. */
    public Optional<JobInfo> job(long id) {
        return store().listing().job(name(), id);
    }

    /**
     * Live jobs of one state, a page at a time: pending jobs in claim order ({@code priority DESC, run_at,
     * id}), processing jobs by claim expiry. Pass the previous page's {@code next} (or null).
     *
     * @param limit 1 to 1000
     */
    public Page<JobInfo> jobs(JobState state, String cursor, int limit) {
        Objects.requireNonNull(state, "state");
        checkLimit(limit);
        return store().listing().jobs(name(), state, cursor, limit);
    }

    /** Pending (and not-yet-due), processing and dead counts of the queue. */
    public QueueStats stats() {
        return store().listing().stats(name());
    }

    /** Dead letters (dead jobs) in id order, a page at a time; pass the previous page's {@code next} (or null). */
    public Page<DeadJob> deadLetters(String cursor, int limit) {
        checkLimit(limit);
        return store().listing().dead(name(), cursor, limit);
    }

    /**
     * Moves one dead letter back to pending under its id, due now, attempts reset (its stamped options are
     * kept). Wakes idle workers.
     *
     * @return false when the queue has no dead letter with this id
     * @throws SluiceException {@link ErrorCode#UNIQUE_KEY_TAKEN} when a live job holds its unique key (nothing
     *                         changed)
     */
    public boolean redrive(long jobId) {
        return store().revive(name(), jobId);
    }

    /**
     * Redrives these dead letters together, in one transaction: all of them or none. Each goes back to pending
     * under its id, due now, attempts reset.
     *
     * @return how many were redriven (the number of distinct ids)
     * @throws SluiceException {@link ErrorCode#JOB_NOT_FOUND} when an id is not a dead letter of this queue, or
     *                         {@link ErrorCode#UNIQUE_KEY_TAKEN} when a live job holds the unique key of one of
     *                         them — nothing is redriven then; {@link ErrorCode#INVALID_QUEUE_OPTIONS} for a null
     *                         list, a null id or more than 10,000 ids
     */
    public int redrive(List<Long> jobIds) {
        List<Long> ids = DeadLetterIds.check(jobIds, ErrorCode.INVALID_QUEUE_OPTIONS, "jobIds");
        Names.validate("queue", name());
        return ids.isEmpty() ? 0 : store().reviveAll(name(), ids);
    }

    /**
     * Redrives every dead letter of the queue, a bounded batch per statement (each batch its own
     * transaction). A dead letter whose unique key a live job holds (or an older dead letter of the queue
     * holds too) stays dead and is not counted. Wakes idle workers.
     *
     * @return how many were redriven
     */
    public int redriveAll() {
        return store().redriveAll(name());
    }

    /**
     * Deletes these dead letters, in one transaction: all of them or none.
     *
     * @return how many were deleted (the number of distinct ids)
     * @throws SluiceException {@link ErrorCode#JOB_NOT_FOUND} when an id is not a dead letter of this queue
     *                         (nothing deleted); {@link ErrorCode#INVALID_QUEUE_OPTIONS} for a null list, a null
     *                         id or more than 10,000 ids
     */
    public int purge(List<Long> jobIds) {
        List<Long> ids = DeadLetterIds.check(jobIds, ErrorCode.INVALID_QUEUE_OPTIONS, "jobIds");
        Names.validate("queue", name());
        return ids.isEmpty() ? 0 : store().purgeDead(name(), ids);
    }

    /** Deletes every dead letter of the queue, a bounded batch per statement; returns how many. */
    public int purgeAll() {
        return store().purgeDead(name(), null);
    }

    private static void checkLimit(int limit) {
        if (limit < 1 || limit > MAX_PAGE) {
            throw new SluiceException(ErrorCode.INVALID_QUEUE_OPTIONS, "limit must be between 1 and " + MAX_PAGE
                    + " (got " + limit + ")");
        }
    }

    @Override
    public String toString() {
        return "QueueAdmin[" + queue.name() + "]";
    }
}
