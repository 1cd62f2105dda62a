package dev.sluice;

import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * The operator actions of a consumer group ({@code group.admin()}): dead letters and rewinds, named as on
 * the queue side ({@link QueueAdmin}). Registration and consumption stay on {@link ConsumerGroup}.
 */
public final class GroupAdmin {
    private final ConsumerGroup<?> group;

    GroupAdmin(ConsumerGroup<?> group) {
        this.group = Objects.requireNonNull(group, "group");
    }

    /** Dead letters in message-id order, a page at a time; pass the previous page's {@code next} (or null). */
    public Page<DeadLetter> deadLetters(String cursor, int limit) {
        return group.deadLetters(cursor, limit);
    }

    /** Puts these dead letters back to ready with attempts reset; all or none. */
    public int redrive(List<Long> messageIds) {
        return group.redrive(messageIds);
    }

    /** Redrives every dead letter of the group. */
    public int redriveAll() {
        return group.redriveAll();
    }

    /** Deletes these dead letters (the messages stay in the log). */
    public int purge(List<Long> messageIds) {
        return group.purge(messageIds);
    }

    /** Deletes every dead letter of the group. */
    public int purgeAll() {
        return group.purgeAll();
    }

    /** See {@link ConsumerGroup#rewindToId(long, boolean)}. */
    public GroupInfo rewindToId(long id, boolean force) {
        return group.rewindToId(id, force);
    }

    /** See {@link ConsumerGroup#rewindToTime(Instant, boolean)}. */
    public GroupInfo rewindToTime(Instant time, boolean force) {
        return group.rewindToTime(time, force);
    }

    @Override
    public String toString() {
        return "GroupAdmin[" + group + "]";
    }
}
