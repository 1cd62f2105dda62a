package dev.sluice.internal.produce;

import dev.sluice.AmbientTransaction;
import dev.sluice.ErrorCode;
import dev.sluice.Outgoing;
import dev.sluice.ProduceOptions;
import dev.sluice.Produced;
import dev.sluice.Producer;
import dev.sluice.ProducerConfig;
import dev.sluice.Serde;
import dev.sluice.SluiceException;
import dev.sluice.StreamInfo;
import dev.sluice.internal.catalog.StreamCatalog;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.jdbc.SqlErrors;
import dev.sluice.internal.maint.PartitionKeeper;
import dev.sluice.internal.notify.Channels;
import dev.sluice.internal.schema.FamilyTables;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.LongConsumer;

/** The producer behind {@link Producer}: validation, the batcher, the transaction forms. */
public final class DefaultProducer<T> implements Producer<T> {
    private final Db db;
    private final StreamCatalog catalog;
    private final String schema;
    private final String streamName;
    private final MessageEncoder<T> encoder;
    private final ProducerConfig config;
    private final Executor background;
    private final Batcher batcher;
    private final Runnable onClose;
    private volatile Resolved resolved;
    private volatile boolean closed;
    /** Told the stream id after each commit of our own or a joined transaction: wakes the consumers here and elsewhere. */
    private final LongConsumer committed;
    /** The stream's counters (no-ops without a registry): messages and duplicates of our own commits. */
    private final dev.sluice.internal.metrics.ProducerMeters meters;
    /** The caller's transaction that produce calls join when there is one (AmbientTransaction.NONE: never). */
    private final AmbientTransaction ambient;

    private record Resolved(StreamTarget target, PartitionKeeper keeper) {
    }

    @SuppressWarnings("unchecked")
    public DefaultProducer(Db db, StreamCatalog catalog, String schema, String streamName, Class<T> payloadType,
                           ProducerConfig config, Executor background, Runnable onClose, LongConsumer committed,
                           dev.sluice.internal.metrics.ProducerMeters meters, dev.sluice.internal.tracing.Tracing tracing,
                           AmbientTransaction ambient) {
        this.db = db;
        this.ambient = Objects.requireNonNull(ambient, "ambient");
        this.meters = meters;
        this.catalog = catalog;
        this.schema = schema;
        this.streamName = streamName;
        this.config = config;
        this.background = background;
        this.onClose = onClose;
        this.committed = committed;
        Serde<T> serde = config.serde() != null ? (Serde<T>) config.serde() : Serde.forType(payloadType);
        this.encoder = new MessageEncoder<>(serde, payloadType, tracing); // trace headers: docs/tracing.md
        this.batcher = new Batcher(streamName, config.maxBatchSize(), config.maxInFlight(), new Batcher.Bounds(
                config.maxBufferedMessages(), config.maxBufferedBytes(), config.bufferTimeout()), this::flush);
    }

    @Override
    public String streamName() {
        return streamName;
    }

    /** Resolves the stream once (validating its name first, without I/O) and caches it. */
    private Resolved resolved() {
        Resolved r = resolved;
        if (r == null) {
            synchronized (this) {
                r = resolved;
                if (r == null) {
                    dev.sluice.internal.catalog.Names.validate("stream", streamName);
                    StreamInfo info = catalog.requireUsable(streamName);
                    FamilyTables tables = new FamilyTables(catalog.quotedSchema(), info.id());
                    StreamTarget target = new StreamTarget(info.id(), info.name(), info.config().partitionSize(),
                            info.config().maxPayloadBytes(), info.config().idempotencyKeyTtl().toNanos(), tables,
                            Channels.forSchema(schema));
                    r = new Resolved(target, new PartitionKeeper(db, schema, tables, target.partitionSize(), background));
                    resolved = r;
                }
            }
        }
        return r;
    }

    private void ensureOpen() {
        if (closed) {
            throw new SluiceException(ErrorCode.PRODUCER_CLOSED, "the producer of stream '" + streamName + "' is closed");
        }
    }

    @Override
    public Produced produce(T payload, ProduceOptions options) {
        AmbientTransaction.Joined tx = ambient.current();
        if (tx != null) {
            return joined(tx, payload, options);
        }
        try {
            return produceAsync0(payload, options, true).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SluiceException(ErrorCode.PRODUCER_CLOSED, "interrupted while waiting for the commit", e);
        } catch (ExecutionException e) {
            throw unwrap(e.getCause());
        }
    }

    @Override
    public CompletableFuture<Produced> produceAsync(T payload, ProduceOptions options) {
        try {
            AmbientTransaction.Joined tx = ambient.current();
            if (tx != null) {
                return CompletableFuture.completedFuture(joined(tx, payload, options));
            }
            return produceAsync0(payload, options, false);
        } catch (SluiceException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Validates and hands the message to the batcher; {@code wait}: wait for room in a full buffer. */
    private CompletableFuture<Produced> produceAsync0(T payload, ProduceOptions options, boolean wait) {
        ensureOpen();
        Resolved r = resolved();
        return batcher.submit(encoder.encode(payload, options, r.target().maxPayloadBytes()), wait);
    }

    @Override
    public List<Produced> produceBatch(List<Outgoing<T>> messages) {
        Objects.requireNonNull(messages, "messages");
        ensureOpen();
        if (messages.isEmpty()) {
            return List.of();
        }
        Resolved r = resolved();
        List<Encoded> encoded = new ArrayList<>(messages.size());
        for (int i = 0; i < messages.size(); i++) {
            Outgoing<T> m = messages.get(i);
            if (m == null) {
                throw new SluiceException(ErrorCode.NULL_PAYLOAD, "message " + i + " of the batch is null");
            }
            try {
                encoded.add(encoder.encode(m.payload(), m.options(), r.target().maxPayloadBytes()));
            } catch (SluiceException e) {
                throw new SluiceException(e.code(), "message " + i + " of the batch: " + e.problem(), e);
            }
        }
        AmbientTransaction.Joined tx = ambient.current();
        return tx != null ? joined(tx, r, encoded) : write(r, encoded);
    }

    @Override
    public Produced produceInTransaction(Connection connection, T payload, ProduceOptions options) {
        Objects.requireNonNull(connection, "connection");
        ensureOpen();
        Resolved r = resolved();
        return inTransaction(connection, r, List.of(encoder.encode(payload, options, r.target().maxPayloadBytes())), true).get(0);
    }

    /** Joins the ambient transaction with one message; its commit wakes this process's consumers and counts it. */
    private Produced joined(AmbientTransaction.Joined tx, T payload, ProduceOptions options) {
        ensureOpen();
        Resolved r = resolved();
        return joined(tx, r, List.of(encoder.encode(payload, options, r.target().maxPayloadBytes()))).get(0);
    }

    private List<Produced> joined(AmbientTransaction.Joined tx, Resolved r, List<Encoded> messages) {
        List<Produced> out = inTransaction(tx.connection(), r, messages, false);
        tx.afterCommit(() -> {
            committed.accept(r.target().id());
            count(out);
        });
        return out;
    }

    /**
     * Writes the messages in the caller's open transaction: never commits, never retries. {@code wake}: the
     * transaction sends the stream's wake-up (false when an after-commit action sends it).
     */
    private List<Produced> inTransaction(Connection connection, Resolved r, List<Encoded> messages, boolean wake) {
        try {
            if (connection.getAutoCommit()) {
                throw new SluiceException(ErrorCode.INVALID_OPTIONS,
                        "producing in the caller's transaction needs a connection in a transaction (auto-commit off)");
            }
            r.keeper().beforeWrite(messages.size());
            List<Produced> out = MessageWriter.write(connection, r.target(), messages, wake);
            long max = 0;
            for (Produced p : out) {
                max = Math.max(max, p.id());
            }
            r.keeper().afterWrite(max);
            return out;
        } catch (SQLException ex) {
            if (isMissingPartition(ex)) {
                // The caller's transaction is aborted and cannot see partitions attached now, so the
                // retry is the caller's, in a new transaction: extend (on a connection of our own) first.
                throw afterExtending(r, translate(ex, r));
            }
            throw translate(ex, r);
        }
    }

    @Override
    public Produced produce(Function<Connection, T> work, ProduceOptions options) {
        Objects.requireNonNull(work, "work");
        ensureOpen();
        Resolved r = resolved();
        AmbientTransaction.Joined tx = ambient.current();
        if (tx != null) { // the caller's transaction: its manager, not the producer, decides about replays
            T payload = work.apply(tx.connection());
            return joined(tx, r, List.of(encoder.encode(payload, options, r.target().maxPayloadBytes()))).get(0);
        }
        r.keeper().beforeWrite(1);
        Produced p = writeWithRetry(r, c -> {
            Encoded e = encoder.encode(work.apply(c), options, r.target().maxPayloadBytes());
            return MessageWriter.write(c, r.target(), List.of(e), false);
        }).get(0);
        r.keeper().afterWrite(p.id());
        return p;
    }

    /** One batch of the batcher: one transaction; a non-transient failure is retried per message to isolate it. */
    private void flush(List<Batcher.Request> batch) {
        Resolved r;
        try {
            r = resolved();
        } catch (RuntimeException e) {
            batch.forEach(q -> batcher.fail(q, e));
            return;
        }
        List<Encoded> messages = new ArrayList<>(batch.size());
        batch.forEach(q -> messages.add(q.message()));
        try {
            batcher.succeedAll(batch, write(r, messages));
        } catch (SluiceException e) {
            if (batch.size() == 1 || !isolatable(e)) {
                batch.forEach(q -> batcher.fail(q, e));
                return;
            }
            for (Batcher.Request q : batch) {
                try {
                    batcher.succeed(q, write(r, List.of(q.message())).get(0));
                } catch (RuntimeException single) {
                    batcher.fail(q, single);
                }
            }
        }
    }

    /** Errors where a retry per message can tell the bad one from the rest (not lost commits or outages). */
    private static boolean isolatable(SluiceException e) {
        return switch (e.code()) {
            case COMMIT_OUTCOME_UNKNOWN, DATABASE_UNAVAILABLE, STREAM_NOT_FOUND, PRODUCER_CLOSED,
                    DATABASE_OLDER, DATABASE_NEWER, PARTITION_UNAVAILABLE, PARTITION_NOT_CREATABLE -> false;
            default -> true;
        };
    }

    private List<Produced> write(Resolved r, List<Encoded> messages) {
        r.keeper().beforeWrite(messages.size());
        List<Produced> results = writeWithRetry(r, c -> MessageWriter.write(c, r.target(), messages, false));
        long max = 0;
        for (Produced p : results) {
            max = Math.max(max, p.id());
        }
        r.keeper().afterWrite(max);
        return results;
    }

    private interface Work {
        List<Produced> run(Connection c) throws SQLException;
    }

    /** Runs in a transaction of our own; a missing partition is created and the write tried once more. */
    private List<Produced> writeWithRetry(Resolved r, Work work) {
        for (int attempt = 1; ; attempt++) {
            try {
                List<Produced> out = db.transaction("produce to stream '" + streamName + "'", c -> {
                    try {
                        return work.run(c);
                    } catch (SQLException e) {
                        if (isMissingPartition(e) || SqlErrors.UNDEFINED_TABLE.equals(e.getSQLState())) {
                            throw translate(e, r);
                        }
                        throw e;
                    }
                });
                committed.accept(r.target().id());
                count(out);
                return out;
            } catch (SluiceException e) {
                if (e.code() == ErrorCode.PARTITION_UNAVAILABLE && attempt == 1) {
                    SluiceException refused = afterExtending(r, e);
                    if (refused.code() == ErrorCode.PARTITION_NOT_CREATABLE) {
                        throw refused;
                    }
                    continue;
                }
                throw e;
            }
        }
    }

    /**
     * Counts a committed transaction's messages in the stream's meters: new ones and idempotent repeats apart. Only our
     * own transactions and joined ambient ones (after their commit) are counted; {@link #produceInTransaction} cannot see
     * whether the caller commits.
     */
    private void count(List<Produced> out) {
        int duplicates = 0;
        for (int i = 0; i < out.size(); i++) {
            if (out.get(i).duplicate()) {
                duplicates++;
            }
        }
        meters.committed(out.size() - duplicates, duplicates);
    }

    /**
     * Extends the partitions on a connection of the keeper's own after a write met a missing one, and
     * returns the error to raise if the write is not retried: {@code missing} itself (retryable) when
     * the extension ran or may run later, {@link ErrorCode#PARTITION_NOT_CREATABLE} when this database
     * user may not create partitions — then a retry fails the same way until an admin extends them.
     */
    private SluiceException afterExtending(Resolved r, SluiceException missing) {
        if (r.keeper().extend(Math.max(1024, config.maxBatchSize())) != PartitionKeeper.Extension.NOT_PERMITTED) {
            return missing;
        }
        return new SluiceException(ErrorCode.PARTITION_NOT_CREATABLE, "stream '" + streamName + "' has run past its"
                + " log partitions and this database user may not create tables in schema '" + schema + "'; a user"
                + " with CREATE on that schema (the one that registered the stream) must run 'sluice stream"
                + " extend-partitions " + streamName + "' (or stream(\"" + streamName + "\").extendPartitions(n))",
                missing.getCause());
    }

    private static boolean isMissingPartition(SQLException e) {
        return "23514".equals(e.getSQLState()) && e.getMessage() != null && e.getMessage().contains("no partition");
    }

    private SluiceException translate(SQLException e, Resolved r) {
        if (isMissingPartition(e)) {
            return new SluiceException(ErrorCode.PARTITION_UNAVAILABLE, "no partition of " + r.target().tables().messageLog()
                    + " holds the message's id", e);
        }
        if (SqlErrors.UNDEFINED_TABLE.equals(e.getSQLState())) {
            resolved = null; // destroyed (or recreated): resolve again next time
            return new SluiceException(ErrorCode.STREAM_NOT_FOUND, "stream '" + streamName + "' no longer exists", e);
        }
        return SqlErrors.map(e, "produce to stream '" + streamName + "'");
    }

    private static SluiceException unwrap(Throwable t) {
        Throwable c = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
        if (c instanceof SluiceException se) {
            return se;
        }
        return new SluiceException(ErrorCode.DATABASE_ERROR, "produce failed: " + c, c);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        batcher.close(config.shutdownTimeout());
        onClose.run();
    }
}
