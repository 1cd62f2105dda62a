package dev.sluice;

import dev.sluice.internal.catalog.Names;
import dev.sluice.internal.consume.GroupOperations;
import dev.sluice.internal.consume.GroupRegistry;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A handle on a consumer group of a stream: an independent reader with its own progress. Instances
 * of one group share the work; different groups each see every message. Creating a handle does no I/O.
 *
 * @param <T> the payload type handlers receive
 */
public final class ConsumerGroup<T> {
    private final Sluice sluice;
    private final Stream<T> stream;
    private final String name;

    ConsumerGroup(Sluice sluice, Stream<T> stream, String name) {
        this.sluice = sluice;
        this.stream = stream;
        this.name = name;
    }

    public String name() {
        return name;
    }

    public Stream<T> stream() {
        return stream;
    }

    private GroupRegistry catalog() {
        return sluice.groupRegistry();
    }

    private GroupOperations operations() {
        return sluice.groupOperations();
    }

    /** Registers the group with the defaults; see {@link #register(GroupConfig)}. */
    public GroupInfo register() {
        return register(GroupConfig.defaults());
    }

    /**
     * Creates the group (its cursor at the config's start position) or replaces its declaration (the
     * whole document; the newest wins; {@code start} is only read at creation). Binding changes apply
     * to messages produced from now on. Every declaration is logged.
     */
    public GroupInfo register(GroupConfig config) {
        Objects.requireNonNull(config, "config");
        return catalog().register(stream.name(), name, config);
    }

    /** The group with its cursor, lag and exception counts, or empty. */
    public Optional<GroupInfo> get() {
        return catalog().get(stream.name(), name);
    }

    /**
     * Starts consuming (non-blocking): handlers run on the consumption's threads until it is closed.
     * Close drains: running handlers finish (up to the shutdown timeout), their outcomes are recorded
     * and unfinished work is released at once.
     *
     * @throws SluiceException {@link ErrorCode#GROUP_NOT_FOUND} when the group is not registered
     */
    public Consumption consume(Handler<T> handler, ConsumeOptions options) {
        Objects.requireNonNull(handler, "handler");
        Objects.requireNonNull(options, "options");
        Names.validate("consumer group", name);
        return sluice.engine().consume(stream.name(), name, stream.payloadType(), handler, options);
    }

    /** Like {@link #consume(Handler, ConsumeOptions)} with the default options. */
    public Consumption consume(Handler<T> handler) {
        return consume(handler, ConsumeOptions.defaults());
    }

    /** The operator actions of this group: dead letters and rewinds. */
    public GroupAdmin admin() {
        return new GroupAdmin(this);
    }

    /** Dead letters in message-id order, a page at a time; pass the previous page's {@code next} (or null). */
    public Page<DeadLetter> deadLetters(String cursor, int limit) {
        return operations().deadLetters(stream.name(), name, cursor, limit);
    }

    /** Puts these dead letters back to ready with attempts reset; all of them must be dead letters of the group. */
    public int redrive(List<Long> messageIds) {
        Objects.requireNonNull(messageIds, "messageIds");
        return operations().redrive(stream.name(), name, messageIds);
    }

    /** Redrives every dead letter of the group. */
    public int redriveAll() {
        return operations().redrive(stream.name(), name, null);
    }

    /** Deletes these dead letters (the messages stay in the log). */
    public int purge(List<Long> messageIds) {
        Objects.requireNonNull(messageIds, "messageIds");
        return operations().purge(stream.name(), name, messageIds);
    }

    /** Deletes every dead letter of the group. */
    public int purgeAll() {
        return operations().purge(stream.name(), name, null);
    }

    /**
     * Resets the cursor so delivery resumes at {@code id}. Refused while consumers of the group are
     * live ({@link ErrorCode#INSTANCES_LIVE}) unless {@code force}.
     */
    public GroupInfo rewindToId(long id, boolean force) {
        if (id < 1) {
            throw new SluiceException(ErrorCode.INVALID_CONFIG, "rewind id must be at least 1 (got " + id + ")");
        }
        return operations().rewind(stream.name(), name, id, null, force);
    }

    /** Resets the cursor so delivery resumes at the first message produced at or after {@code time}. */
    public GroupInfo rewindToTime(Instant time, boolean force) {
        return operations().rewind(stream.name(), name, null, Objects.requireNonNull(time, "time"), force);
    }

    @Override
    public String toString() {
        return "ConsumerGroup[" + stream.name() + "/" + name + "]";
    }
}
