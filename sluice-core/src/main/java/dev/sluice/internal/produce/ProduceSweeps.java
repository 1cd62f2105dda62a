package dev.sluice.internal.produce;

import dev.sluice.internal.jdbc.Sql;
import dev.sluice.internal.schema.FamilyTables;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * The janitor's way into the tables this package owns ({@code idempotency_key_<id>}, {@code compaction_head_<id>}):
 * bounded, idempotent deletes of expired rows and the oldest remaining row's time. Built once per stream; the
 * statements are {@link ProduceSql.Sweeps}'. Each call is one statement on a connection the caller manages
 * (auto-commit: one batch per transaction).
 */
public final class ProduceSweeps {
    private final ProduceSql.Sweeps sql;

    /** The statements of one stream's family; no I/O. */
    public ProduceSweeps(FamilyTables tables) {
        this.sql = new ProduceSql.Sweeps(tables);
    }

    /** Deletes up to {@code limit} idempotency keys older than {@code ttl}; returns how many. */
    public int deleteExpiredKeys(Connection c, Duration ttl, int limit) throws SQLException {
        double s = seconds(ttl);
        return Sql.update(c, sql.deleteExpiredKeys, s, limit, s);
    }

    /** The creation time of the oldest idempotency key, or empty when there is none. */
    public Optional<Instant> oldestKey(Connection c) throws SQLException {
        return time(c, sql.oldestKey);
    }

    /**
     * Deletes up to {@code limit} empty compaction heads ({@code message_id IS NULL}) last updated more than
     * {@code ttl} ago; a head a producer holds or has just given a winner is left. Returns how many.
     */
    public int deleteEmptyHeads(Connection c, Duration ttl, int limit) throws SQLException {
        double s = seconds(ttl);
        return Sql.update(c, sql.deleteEmptyHeads, s, limit, s);
    }

    /** The last update of the oldest empty compaction head, or empty when there is none. */
    public Optional<Instant> oldestEmptyHead(Connection c) throws SQLException {
        return time(c, sql.oldestEmptyHead);
    }

    private static double seconds(Duration d) {
        return d.toNanos() / 1e9;
    }

    private static Optional<Instant> time(Connection c, String query) throws SQLException {
        return Sql.first(c, query, rs -> {
            Timestamp t = rs.getTimestamp(1);
            return t == null ? null : t.toInstant();
        });
    }
}
