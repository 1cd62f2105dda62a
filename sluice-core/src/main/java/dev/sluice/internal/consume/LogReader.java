package dev.sluice.internal.consume;

import dev.sluice.StoredMessage;
import dev.sluice.StreamInfo;
import dev.sluice.internal.catalog.StreamCatalog;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.schema.FamilyTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a stream's log by id, never past the fenced head, so a reader that continues from its last id
 * never skips a message whose producer commits late. Used by {@code sluice stream read}.
 */
public final class LogReader {
    private static final com.fasterxml.jackson.databind.ObjectMapper JSON = new com.fasterxml.jackson.databind.ObjectMapper();

    private final Db db;
    private final StreamCatalog catalog;

    public LogReader(Db db, StreamCatalog catalog) {
        this.db = db;
        this.catalog = catalog;
    }

    /**
     * Up to {@code limit} messages with ids above {@code afterId} and at or below the fenced head, in id
     * order, whose payloads add up to at most {@code maxBytes} (the first message always comes, however
     * large). Waits up to {@code fenceWait} for older producing transactions; if they are still open, it
     * returns what is safe so far (possibly nothing).
     */
    public List<StoredMessage> read(String stream, long afterId, int limit, long maxBytes, Duration fenceWait) {
        StreamInfo info = catalog.requireUsable(stream);
        FamilyTables t = new FamilyTables(catalog.quotedSchema(), info.id());
        return db.read("read stream '" + stream + "'", c -> {
            if (sequenceHead(c, t) <= afterId) {
                return List.of(); // nothing new: skip the fence (and its xid) entirely
            }
            long head;
            try {
                head = SnapshotFence.settledHead(c, t, fenceWait);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return List.of();
            }
            if (head <= afterId) {
                return List.of();
            }
            return select(c, t, afterId, head, limit, maxBytes);
        });
    }

    private static long sequenceHead(Connection c, FamilyTables t) throws java.sql.SQLException {
        try (PreparedStatement ps = c.prepareStatement(ConsumeSql.of(t).messages.head); ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static Instant deliverAt(String json) {
        if (json == null) {
            return null;
        }
        try {
            com.fasterxml.jackson.databind.JsonNode at = JSON.readTree(json).get("deliver_at");
            return at == null || at.isNull() ? null : Instant.parse(at.asText());
        } catch (java.io.IOException e) {
            throw new IllegalStateException("unreadable options", e);
        }
    }

    private static List<StoredMessage> select(Connection c, FamilyTables t, long afterId, long head, int limit, long maxBytes)
            throws java.sql.SQLException {
        List<StoredMessage> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(ConsumeSql.of(t).messages.readPage)) {
            ps.setLong(1, afterId);
            ps.setLong(2, head);
            ps.setInt(3, limit);
            ps.setLong(4, maxBytes);
            ps.setLong(5, afterId);
            ps.setLong(6, head);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    long rank = rs.getLong(7);
                    Long r = rs.wasNull() ? null : rank;
                    out.add(new StoredMessage(rs.getLong(1), rs.getTimestamp(2).toInstant(), rs.getInt(3), rs.getString(4),
                            rs.getString(5), rs.getString(6), r, dev.sluice.internal.text.Headers.decode(rs.getString(8)), deliverAt(rs.getString(9)),
                            rs.getBytes(10)));
                }
            }
        }
        return out;
    }
}
