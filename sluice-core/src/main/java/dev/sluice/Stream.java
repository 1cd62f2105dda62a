package dev.sluice;

import dev.sluice.internal.catalog.Names;
import java.util.Optional;

/**
 * A handle on a stream by name. Creating a handle does no I/O and cannot fail; the name is checked
 * (before any round trip) by the operations.
 *
 * @param <T> the payload type ({@code byte[]} for the untyped form)
 */
public final class Stream<T> {
    private final Sluice sluice;
    private final String name;
    private final Class<T> payloadType;

    Stream(Sluice sluice, String name, Class<T> payloadType) {
        this.sluice = sluice;
        this.name = name;
        this.payloadType = payloadType;
    }

    /** The stream's name as given to the handle. */
    public String name() {
        return name;
    }

    /** The payload type of this handle. */
    public Class<T> payloadType() {
        return payloadType;
    }

    /** Registers the stream with the default configuration; see {@link #register(StreamConfig)}. */
    public StreamInfo register() {
        return register(StreamConfig.defaults());
    }

    /**
     * Creates the stream (its family of tables and first partitions; the control plane too when
     * missing) or, when it exists, replaces its configuration with this whole document (the newest
     * declaration wins; unset fields mean defaults). Every declaration is logged in
     * {@code stream_config_log}. One transaction: all of it happens or none. Registering an existing
     * stream again also creates any log partitions missing ahead of its head (see
     * {@link #extendPartitions(int)}).
     *
     * @throws SluiceException {@link ErrorCode#INVALID_NAME} for a bad name (no round trip),
     *                         {@link ErrorCode#IMMUTABLE_FIELD} when the partition size differs,
     *                         {@link ErrorCode#DATABASE_OLDER}/{@link ErrorCode#DATABASE_NEWER}/
     *                         {@link ErrorCode#MIGRATION_CHECKSUM_MISMATCH} from the version gates
     */
    public StreamInfo register(StreamConfig config) {
        java.util.Objects.requireNonNull(config, "config");
        return sluice.engine().streamCatalog().register(name, config, sluice.migrate());
    }

    /** The most partitions {@link #extendPartitions(int)} creates ahead of the head in one call. */
    public static final int MAX_PARTITIONS_AHEAD = 10_000;

    /**
     * Creates log partitions ahead of the stream's head (the highest id handed out), for producers
     * whose database user may not run DDL (see docs/security.md, "Least-privilege roles"). Creates every
     * missing partition from the head's through {@code partitionsAhead} more (never fewer than the
     * producers keep ahead by themselves: one partition and 1,024 ids); idempotent, so run it as
     * often as you like, for example from a scheduled job of an admin user. Registering the stream
     * again does the same with the minimum room.
     *
     * @param partitionsAhead partitions to have ready past the head's, 1 to {@link #MAX_PARTITIONS_AHEAD}
     * @return what was created and the ids now covered
     * @throws SluiceException {@link ErrorCode#INVALID_CONFIG} for a count out of range (no round trip),
     *                         {@link ErrorCode#STREAM_NOT_FOUND}, {@link ErrorCode#PERMISSION_DENIED} when this
     *                         database user may not create tables in the schema
     */
    public PartitionExtension extendPartitions(int partitionsAhead) {
        if (partitionsAhead < 1 || partitionsAhead > MAX_PARTITIONS_AHEAD) {
            throw new SluiceException(ErrorCode.INVALID_CONFIG, "partitionsAhead must be between 1 and "
                    + MAX_PARTITIONS_AHEAD + " (got " + partitionsAhead + ")");
        }
        return sluice.engine().streamCatalog().extendPartitions(name, partitionsAhead);
    }

    /** The stream as stored, or empty when it does not exist. */
    public Optional<StreamInfo> get() {
        return sluice.engine().streamCatalog().get(name);
    }

    /**
     * Renames the stream. Its id, and so its tables' names, stay the same; this handle keeps the old
     * name, so take a new handle for the new name.
     *
     * @throws SluiceException {@link ErrorCode#STREAM_NOT_FOUND}, {@link ErrorCode#STREAM_NAME_TAKEN}, {@link ErrorCode#INVALID_NAME}
     */
    public StreamInfo rename(String newName) {
        return sluice.engine().streamCatalog().rename(name, newName);
    }

    /**
     * Drops the stream's family of tables (never a row-by-row sweep) and its control-plane rows.
     *
     * @param force drop even when the log holds messages
     * @throws SluiceException {@link ErrorCode#DESTROY_NOT_ALLOWED} unless the client was built with
     *                         {@code allowDestroy(true)} (checked before any round trip),
     *                         {@link ErrorCode#STREAM_NOT_EMPTY}, {@link ErrorCode#STREAM_NOT_FOUND}
     */
    public void destroy(boolean force) {
        Names.validate("stream", name);
        if (!sluice.allowDestroy()) {
            throw new SluiceException(ErrorCode.DESTROY_NOT_ALLOWED, "this client may not destroy stream '" + name
                    + "'; build it with allowDestroy(true)");
        }
        sluice.engine().streamCatalog().destroy(name, force);
    }

    /** A handle on a consumer group of this stream (no I/O, cannot fail). */
    public ConsumerGroup<T> consumerGroup(String groupName) {
        return new ConsumerGroup<>(sluice, this, groupName);
    }

    /** Every consumer group of this stream with its progress, by name. */
    public java.util.List<GroupInfo> consumerGroups() {
        Names.validate("stream", name);
        return sluice.engine().groupRegistry().list(name);
    }

    /** A simple offset-tracked reader (for users who manage their own progress); see {@link Reader}. */
    public Reader reader(String readerName) {
        return new Reader(sluice, this, readerName);
    }

    /** A producer with the default configuration; see {@link #producer(ProducerConfig)}. */
    public Producer<T> producer() {
        return producer(ProducerConfig.defaults());
    }

    /**
     * A producer for this stream (thread-safe; share one per stream). Creating it does no I/O: the
     * stream is resolved on the first produce. Close it (or the client) to flush queued messages.
     */
    public Producer<T> producer(ProducerConfig config) {
        java.util.Objects.requireNonNull(config, "config");
        return sluice.engine().producer(name, payloadType, config);
    }

    /**
     * Reads up to {@code limit} messages with ids above {@code afterId}, in id order, never past the
     * snapshot fence: a reader that continues from the last id it saw never skips a message whose
     * producer commits late. Waits up to {@code fenceWait} for older producing transactions to end and
     * returns only what is safe (possibly nothing) when they are still open. The read stops at the default
     * byte budget ({@link ReadOptions#DEFAULT_MAX_BYTES}); see {@link #read(long, int, ReadOptions)}.
     */
    public java.util.List<StoredMessage> read(long afterId, int limit, java.time.Duration fenceWait) {
        return read(afterId, limit, ReadOptions.defaults().withFenceWait(java.util.Objects.requireNonNull(fenceWait, "fenceWait")));
    }

    /**
     * Like {@link #read(long, int, java.time.Duration)}, with a byte budget: the server stops sending
     * messages once their payloads would pass {@link ReadOptions#maxBytes()} (always sending the first one),
     * so a continuing read (from the last id returned) gets the rest without skipping any, in order.
     */
    public java.util.List<StoredMessage> read(long afterId, int limit, ReadOptions options) {
        if (limit < 1 || limit > 10_000) {
            throw new SluiceException(ErrorCode.INVALID_CONFIG, "limit must be between 1 and 10000 (got " + limit + ")");
        }
        java.util.Objects.requireNonNull(options, "options");
        Names.validate("stream", name);
        return sluice.engine().logReader().read(name, afterId, limit, options.maxBytes(), options.fenceWait());
    }

    @Override
    public String toString() {
        return "Stream[" + name + "]";
    }
}
