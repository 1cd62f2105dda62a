package dev.sluice.internal.consume;

import dev.sluice.internal.schema.FamilyTables;

/**
 * Reads of the stream's log for delivery and readers (read-only: the log is written by the producer path),
 * built once per stream ({@link ConsumeSql#of}): messages of a range or of listed ids, a reader's page, the
 * head, and start positions.
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

    /**
     * A reader's budgeted page ({@link LogReader}). {@code sized} measures the candidate rows without reading
     * their payloads ({@code octet_length} of a stored value reads its length, not the value), {@code cut} keeps the
     * longest prefix within the budget (at least the first row), and only that prefix is sent.
     * Parameters: after id, head, limit, budget, after id, head (both scans bounded by constants, so the planner
     * leaves out the log partitions outside them).
     */
    final String readPage;

    /** The fence observation alone ({@link SnapshotFence#observe}): the head and its holders (text[]). */
    final String observe;

    /**
     * The holders of an observation seen from a given snapshot ({@code SnapshotFence.holders}). Parameters:
     * snapshot text (null: now), the observation's xid8.
     */
    final String holdersAt;

    MessageSql(FamilyTables t) {
        String from = " FROM " + t.messageLog() + " m LEFT JOIN " + t.compactionHead() + " h"
                + "   ON m.compaction_rank IS NOT NULL AND h.compaction_key = m.message_key";
        this.fetchRange = "SELECT " + FETCH_COLUMNS + from + " WHERE m.id BETWEEN ? AND ? AND NOT (m.id = ANY(?))" + " ORDER BY m.id";
        this.fetchIds = "SELECT " + FETCH_COLUMNS + from + " WHERE m.id = ANY(?)" + " ORDER BY m.id";
        this.head = "SELECT " + t.headExpression();
        this.headQuery = "SELECT " + head(t);
        this.firstAtTime = "SELECT min(id) FROM " + t.messageLog() + " WHERE created_at >= ?";
        this.first = "SELECT min(id) FROM " + t.messageLog();
        this.readPage = """
                WITH sized AS (SELECT id, sum(octet_length(payload)) OVER (ORDER BY id) AS upto,
                                      row_number() OVER (ORDER BY id) AS n
                                 FROM %1$s WHERE id > ? AND id <= ? ORDER BY id LIMIT ?),
                     cut AS (SELECT max(id) AS last FROM sized WHERE upto <= ? OR n = 1)
                SELECT m.id, m.created_at, m.schema_version, m.content_type, m.routing_key, m.message_key,
                       m.compaction_rank, m.headers::text, m.options::text, m.payload
                  FROM %1$s m, cut WHERE m.id > ? AND m.id <= ? AND m.id <= cut.last ORDER BY m.id""".formatted(t.messageLog());
        this.observe = "WITH " + SnapshotFence.observationCtes(t) + " SELECT o.head, " + SnapshotFence.HOLDERS
                + "::text[] FROM o";
        this.holdersAt = "WITH snap AS MATERIALIZED (SELECT coalesce(?::pg_snapshot,"
                + " pg_current_snapshot()) AS s, ?::xid8 AS me), " + SnapshotFence.locksCte(t) + " SELECT "
                + SnapshotFence.holders("snap.s", "snap.me") + "::text[] FROM snap";
        this.lastCommitted = "SELECT coalesce(max(id), 0) FROM " + t.messageLog();
    }

    /** A scalar subquery: the highest id drawn from the stream's sequence. Used while building statements only. */
    static String head(FamilyTables t) {
        return "(SELECT " + t.headExpression() + ")";
    }
}
