package dev.sluice.produce;

import dev.sluice.embedded.test.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Reads a stream's log and side tables straight from SQL, for assertions. */
final class Rows {
    private final TestDatabase db;
    private final String q;

    Rows(TestDatabase db) {
        this.db = db;
        this.q = "\"" + db.schema() + "\"";
    }

    record Row(long id, int schemaVersion, String contentType, String routingKey, String messageKey, Long rank,
               String headers, String options, byte[] payload, long xid) {
    }

    long count(long streamId) {
        return scalar("SELECT count(*) FROM " + q + ".message_log_" + streamId);
    }

    long scalar(String sql, Object... args) {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setObject(i + 1, args[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    Map<Long, Row> log(long streamId) {
        Map<Long, Row> out = new LinkedHashMap<>();
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement("SELECT id, schema_version, content_type,"
                + " routing_key, message_key, compaction_rank, headers::text, options::text, payload, xmin::text::bigint FROM "
                + q + ".message_log_" + streamId + " ORDER BY id"); ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                long rank = rs.getLong(6);
                Long r = rs.wasNull() ? null : rank;
                out.put(rs.getLong(1), new Row(rs.getLong(1), rs.getInt(2), rs.getString(3), rs.getString(4),
                        rs.getString(5), r, rs.getString(7), rs.getString(8), rs.getBytes(9), rs.getLong(10)));
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        return out;
    }

    /** compaction_key -> "message_id/schema_version/rank" ("-" parts when empty). */
    Map<String, String> heads(long streamId) {
        Map<String, String> out = new LinkedHashMap<>();
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement("SELECT compaction_key,"
                + " coalesce(message_id::text, '-') || '/' || coalesce(schema_version::text, '-') || '/' || coalesce(rank::text, '-')"
                + " FROM " + q + ".compaction_head_" + streamId + " ORDER BY 1"); ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                out.put(rs.getString(1), rs.getString(2));
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        return out;
    }

    List<String> strings(String sql) {
        List<String> out = new ArrayList<>();
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(sql); ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        return out;
    }
}
