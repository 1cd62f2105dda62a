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

    Sluice sluice() {
        return sluice;
    }

    public Stream<T> stream() {
        return stream;
    }

    private GroupRegistry catalog() {
        return sluice.engine().groupRegistry();
    }

    /** The operator statements (for {@link GroupAdmin}). */
    GroupOperations operations() {
        return sluice.engine().groupOperations();
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

    /** The operator actions of this group: dead letters and rewinds (no I/O). */
    public GroupAdmin admin() {
        return new GroupAdmin(this);
    }

    /**
     * The buckets of a partitioned group with their positions and owners, in bucket order; empty for a group without
     * partitions.
     *
     * @throws SluiceException {@link ErrorCode#GROUP_NOT_FOUND} when the group is not registered
     */
    public java.util.List<PartitionInfo> partitions() {
        return sluice.engine().partitions(stream.name(), name);
    }

    /** @deprecated use {@code admin().deadLetters(cursor, limit)} */
    @Deprecated
    public Page<DeadLetter> deadLetters(String cursor, int limit) {
        return admin().deadLetters(cursor, limit);
    }

    /** @deprecated use {@code admin().redrive(messageIds)} */
    @Deprecated
    public int redrive(List<Long> messageIds) {
        return admin().redrive(messageIds);
    }

    /** @deprecated use {@code admin().redriveAll()} */
    @Deprecated
    public int redriveAll() {
        return admin().redriveAll();
    }

    /** @deprecated use {@code admin().purge(messageIds)} */
    @Deprecated
    public int purge(List<Long> messageIds) {
        return admin().purge(messageIds);
    }

    /** @deprecated use {@code admin().purgeAll()} */
    @Deprecated
    public int purgeAll() {
        return admin().purgeAll();
    }

    /** @deprecated use {@code admin().rewindToId(id, force)} */
    @Deprecated
    public GroupInfo rewindToId(long id, boolean force) {
        return admin().rewindToId(id, force);
    }

    /** @deprecated use {@code admin().rewindToTime(time, force)} */
    @Deprecated
    public GroupInfo rewindToTime(Instant time, boolean force) {
        return admin().rewindToTime(time, force);
    }

    @Override
    public String toString() {
        return "ConsumerGroup[" + stream.name() + "/" + name + "]";
    }
}
