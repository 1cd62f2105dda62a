package dev.sluice.internal.consume;

import dev.sluice.StreamInfo;
import dev.sluice.internal.catalog.StreamCatalog;
import dev.sluice.internal.jdbc.Db;
import java.sql.PreparedStatement;
import java.sql.ResultSet;

/** Saved offsets of a stream's named readers ({@code stream_reader_offset}, via {@link GroupConfigSql}). */
public final class ReaderOffsets {
    private final Db db;
    private final StreamCatalog streams;
    private final GroupConfigSql sql;

    public ReaderOffsets(Db db, StreamCatalog streams, String schema) {
        this.db = db;
        this.streams = streams;
        this.sql = new GroupConfigSql(schema, streams.quotedSchema());
    }

    /** A reader's saved offset (0 when none). */
    public long readerOffset(String stream, String reader) {
        StreamInfo s = streams.requireUsable(stream);
        return db.read("read an offset", c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.readerOffset)) {
                ps.setLong(1, s.id());
                ps.setString(2, reader);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? rs.getLong(1) : 0L;
                }
            }
        });
    }

    /** Saves a reader's offset monotonically; returns the stored value. */
    public long saveReaderOffset(String stream, String reader, long offset) {
        StreamInfo s = streams.requireUsable(stream);
        return db.transaction("save an offset", c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.saveReaderOffset)) {
                ps.setLong(1, s.id());
                ps.setString(2, reader);
                ps.setLong(3, offset);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return rs.getLong(1);
                }
            }
        });
    }
}
