package dev.sluice.internal.consume;

import dev.sluice.internal.schema.FamilyTables;

/**
 * Reads of the stream's log for delivery (read-only: the log is written by the producer path), built once per
 * stream ({@link ConsumeSql#of}): messages of a range or of listed ids, the head, and start positions.
 */
final class MessageSql {
    /** The columns of a fetched message, in the order {@code Fetched.read} reads them. */
    static final String FETCH_COLUMNS = "m.id, m.created_at, m.schema_version, m.content_type, m.routing_key,"
            + " m.message_key, m.compaction_rank, m.headers::text, m.options::text, m.payload,"
            + " (m.compaction_rank IS NOT NULL AND h.message_id IS DISTINCT FROM m.id) AS superseded";

    /** Messages of a range with whether compaction superseded them. Parameters: low, high, resolved ids. */
    final String fetchRange;

    /** Messages of a list of ids with whether compaction superseded them. Parameter: ids. */
    final String fetchIds;

    /** The highest id drawn from the stream's sequence (no xid, no scan). */
    final String head;

    /** As {@link #head}, as the consumer's bindings refresh reads it (a scalar subquery selected). */
    final String headQuery;

    /** The first message at or after a time (null when none). Parameter: time. */
    final String firstAtTime;

    /** The first message of the log (null when empty). */
    final String first;

    /** The highest committed id visible (0 when none). */
    final String lastCommitted;

    MessageSql(FamilyTables t) {
        String from = " FROM " + t.messageLog() + " m LEFT JOIN " + t.compactionHead() + " h"
                + "   ON m.compaction_rank IS NOT NULL AND h.compaction_key = m.message_key";
        this.fetchRange = "SELECT " + FETCH_COLUMNS + from + " WHERE m.id BETWEEN ? AND ? AND NOT (m.id = ANY(?))" + " ORDER BY m.id";
        this.fetchIds = "SELECT " + FETCH_COLUMNS + from + " WHERE m.id = ANY(?)" + " ORDER BY m.id";
        this.head = "SELECT " + t.headExpression();
        this.headQuery = "SELECT " + head(t);
        this.firstAtTime = "SELECT min(id) FROM " + t.messageLog() + " WHERE created_at >= ?";
        this.first = "SELECT min(id) FROM " + t.messageLog();
        this.lastCommitted = "SELECT coalesce(max(id), 0) FROM " + t.messageLog();
    }

    /** A scalar subquery: the highest id drawn from the stream's sequence. Used while building statements only. */
    static String head(FamilyTables t) {
        return "(SELECT " + t.headExpression() + ")";
    }
}
