package dev.sluice.internal.maint;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The database's clock and the head of every stream log of a schema, in one statement whatever the number of
 * streams (the janitor and the manager's metric snapshots read it once per pass). {@code pg_sequences} reads the
 * last value under the sequence's lock, as {@code FamilyTables.headExpression} requires; a sequence never used, or
 * one this role may not read, counts as head 0.
 *
 * @param now   the database's {@code now()}
 * @param heads head per stream id (streams whose log was never written are absent or 0)
 */
public record StreamHeads(Instant now, Map<Long, Long> heads) {
    private static final Pattern SEQUENCE = Pattern.compile("^message_log_([0-9]+)_id_seq$");
    private static final String READ = "SELECT n.now, s.sequencename, coalesce(s.last_value, 0) FROM (SELECT now() AS now) n"
            + " LEFT JOIN pg_sequences s ON s.schemaname = ? AND s.sequencename ~ '^message_log_[0-9]+_id_seq$'";

    public StreamHeads {
        heads = Map.copyOf(heads);
    }

    /** Reads the clock and the heads of {@code schema}'s stream logs. */
    public static StreamHeads read(Connection c, String schema) throws SQLException {
        Instant now = null;
        Map<Long, Long> heads = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement(READ)) {
            ps.setString(1, schema);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    now = rs.getTimestamp(1).toInstant();
                    String seq = rs.getString(2);
                    Matcher m = seq == null ? null : SEQUENCE.matcher(seq);
                    if (m != null && m.matches()) {
                        heads.put(Long.parseLong(m.group(1)), rs.getLong(3));
                    }
                }
            }
        }
        return new StreamHeads(now, heads);
    }

    /** The stream's head (0 when its log was never written). */
    public long of(long streamId) {
        return heads.getOrDefault(streamId, 0L);
    }
}
