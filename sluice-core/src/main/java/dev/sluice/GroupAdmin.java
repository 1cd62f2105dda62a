package dev.sluice;

import dev.sluice.internal.catalog.Names;
import dev.sluice.internal.consume.GroupOperations;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * The operator actions of a consumer group ({@code group.admin()}): dead letters and rewinds, named as on
 * the queue side ({@link QueueAdmin}). Registration and consumption stay on {@link ConsumerGroup}. Creating
 * the handle does no I/O.
 *
 * <p>Id lists follow the same rules as on {@link QueueAdmin}: a null list or a null id is
 * {@link ErrorCode#INVALID_CONFIG}, at most 10,000 ids, repeats count once, an empty list does nothing and
 * returns 0, and an id that is not a dead letter of the group rejects the whole list
 * ({@link ErrorCode#MESSAGE_NOT_FOUND}, nothing changed).
 */
public final class GroupAdmin {
    private final ConsumerGroup<?> group;

    GroupAdmin(ConsumerGroup<?> group) {
        this.group = Objects.requireNonNull(group, "group");
    }

    private GroupOperations operations() {
        return group.operations();
    }

    private String stream() {
        return group.stream().name();
    }

    /** Dead letters in message-id order, a page at a time; pass the previous page's {@code next} (or null). */
    public Page<DeadLetter> deadLetters(String cursor, int limit) {
        return operations().deadLetters(stream(), group.name(), cursor, limit);
    }

    /**
     * Puts these dead letters back to ready with attempts reset, in one transaction: all of them or none.
     *
     * @return how many were redriven (the number of distinct ids)
     * @throws SluiceException {@link ErrorCode#MESSAGE_NOT_FOUND} when an id is not a dead letter of the group
     *                         (nothing changed); {@link ErrorCode#INVALID_CONFIG} for a null list, a null id or
     *                         more than 10,000 ids
     */
    public int redrive(List<Long> messageIds) {
        List<Long> ids = DeadLetterIds.check(messageIds, ErrorCode.INVALID_CONFIG, "messageIds");
        Names.validate("consumer group", group.name());
        return ids.isEmpty() ? 0 : operations().redrive(stream(), group.name(), ids);
    }

    /** Redrives every dead letter of the group. */
    public int redriveAll() {
        return operations().redrive(stream(), group.name(), null);
    }

    /**
     * Deletes these dead letters (the messages stay in the log), in one transaction: all of them or none.
     *
     * @throws SluiceException as {@link #redrive(List)}
     */
    public int purge(List<Long> messageIds) {
        List<Long> ids = DeadLetterIds.check(messageIds, ErrorCode.INVALID_CONFIG, "messageIds");
        Names.validate("consumer group", group.name());
        return ids.isEmpty() ? 0 : operations().purge(stream(), group.name(), ids);
    }

    /** Deletes every dead letter of the group. */
    public int purgeAll() {
        return operations().purge(stream(), group.name(), null);
    }

    /**
     * Resets the cursor so delivery resumes at {@code id}. Refused while consumers of the group are
     * live ({@link ErrorCode#INSTANCES_LIVE}) unless {@code force}.
     */
    public GroupInfo rewindToId(long id, boolean force) {
        if (id < 1) {
            throw new SluiceException(ErrorCode.INVALID_CONFIG, "rewind id must be at least 1 (got " + id + ")");
        }
        return operations().rewind(stream(), group.name(), id, null, force);
    }

    /** Resets the cursor so delivery resumes at the first message produced at or after {@code time}. */
    public GroupInfo rewindToTime(Instant time, boolean force) {
        return operations().rewind(stream(), group.name(), null, Objects.requireNonNull(time, "time"), force);
    }

    /**
     * Changes a partitioned group's number of buckets — an explicit operator action, only while the group is paused
     * (its worker's target is 0: {@code sluice fleet set-target consumer:STREAM/GROUP 0}) and none of its consumers
     * runs. Keys map to other buckets afterwards, so every new bucket starts at the lowest position of the old ones:
     * nothing is skipped, and messages between that position and an old bucket's position are delivered again
     * (at least once). Exception rows (retries, dead letters) stay. Returns the group.
     *
     * @throws SluiceException {@link ErrorCode#INVALID_CONFIG} for a count outside 1..{@value GroupConfig#MAX_PARTITIONS}
     *                         or a group without partitions; {@link ErrorCode#INSTANCES_LIVE} when the group is not
     *                         paused or a consumer of it runs
     */
    public GroupInfo repartition(int partitions) {
        return group.sluice().engine().repartition(stream(), group.name(), partitions);
    }

    @Override
    public String toString() {
        return "GroupAdmin[" + group + "]";
    }
}
