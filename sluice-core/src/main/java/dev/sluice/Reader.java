package dev.sluice;

import dev.sluice.internal.catalog.Names;
import java.util.List;

/**
 * Kafka's manual-offset consumer: reads messages in id order up to the snapshot fence and saves an
 * offset you manage. The saved offset only moves forward ({@code GREATEST}), so a late or duplicate
 * save never rewinds it. Obtain one with {@link Stream#reader(String)} (no I/O).
 */
public final class Reader {
    private final Sluice sluice;
    private final Stream<?> stream;
    private final String name;

    Reader(Sluice sluice, Stream<?> stream, String name) {
        this.sluice = sluice;
        this.stream = stream;
        this.name = name;
    }

    public String name() {
        return name;
    }

    /**
     * Up to {@code limit} messages with ids at or above {@code fromOffset}, never past the fenced head,
     * within the default byte budget ({@link ReadOptions#DEFAULT_MAX_BYTES}).
     */
    public List<StoredMessage> read(long fromOffset, int limit) {
        return read(fromOffset, limit, ReadOptions.defaults());
    }

    /**
     * Like {@link #read(long, int)} with options: the payloads returned stay within
     * {@link ReadOptions#maxBytes()} (a first message larger than that comes alone); read on from the last
     * id returned plus one for the rest.
     */
    public List<StoredMessage> read(long fromOffset, int limit, ReadOptions options) {
        Names.validate("reader", name);
        return stream.read(Math.max(0, fromOffset - 1), limit, options);
    }

    /** The saved offset (the next id to read), or 0 when none was saved. */
    public long offset() {
        Names.validate("reader", name);
        return sluice.engine().readerOffsets().readerOffset(stream.name(), name);
    }

    /** Saves {@code offset} (the next id to read) unless a higher one is saved already; returns the stored offset. */
    public long saveOffset(long offset) {
        Names.validate("reader", name);
        if (offset < 0) {
            throw new SluiceException(ErrorCode.INVALID_CONFIG, "an offset must not be negative (got " + offset + ")");
        }
        return sluice.engine().readerOffsets().saveReaderOffset(stream.name(), name, offset);
    }
}
