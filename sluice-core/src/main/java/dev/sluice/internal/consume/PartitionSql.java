package dev.sluice.internal.consume;

import dev.sluice.internal.schema.FamilyTables;

/**
 * Owner of {@code partition_cursor_<id>}: the positions of partitioned groups, one per (group, bucket), and the
 * fetch of a member's buckets, built once per stream ({@link ConsumeSql#of}). Every message of a bucket at or
 * below its position is resolved (handled, or held by an exception row written in the same transaction), so the
 * exception queue never holds a message above its bucket's position. The table is append-only like the group's
 * cursor: a change writes version {@code seq + 1} and deletes the one it replaces, and the current position is
 * the newest row of (group, bucket), found first by a backward scan of the primary key (docs/partitions.md).
 */
final class PartitionSql {
    /**
     * The bucket of a message, as every client computes it: {@code ((hashtextextended(key, 0) % N) + N) % N}, and
     * {@code id % N} for a message without a key. Used while building statements only.
     *
     * @param key the key column, {@code id} the id column, {@code n} the bucket count (an SQL expression)
     */
    static String bucketOf(String key, String id, String n) {
        return "(CASE WHEN " + key + " IS NULL THEN " + id + " % " + n
                + " ELSE ((hashtextextended(" + key + ", 0) % " + n + ") + " + n + ") % " + n + " END)::int";
    }

    /** The first version of each bucket's position. Parameters: group, bucket count, start position. */
    final String startPositions;

    /** The current positions of some buckets: bucket, position. Parameters: buckets (int[]), group. */
    final String positions;

    /** The current positions of every bucket of a group, in bucket order: bucket, position, updated at. Parameter: group. */
    final String allPositions;

    /**
     * Moves some buckets forward (never back): the next version of each whose position grows, and the deletion of
     * the versions they replace. The old versions are deleted by (group, bucket = ANY, seq = ANY): a bucket has one
     * live row (its current version), so the cross product of the lists matches exactly the replaced rows, and every
     * condition reaches the index (a join could walk the versions a held xmin keeps). Run by the bucket's owner under
     * its shard lease's row lock, after {@code synchronous_commit = off} for the transaction (two statements, one
     * round trip): a server crash forgets positions and rows together. The bucket's {@code run_tops} at or below the new
     * position go (the hand-outs up to them committed). Parameters: buckets
     * (int[]), positions (bigint[]), group, group.
     */
    final String advance;

    /** Sets every bucket of a group to one position (a rewind, a repartition). Parameters: position, group, group. */
    final String setAll;

    /** The lowest position over a group's buckets (null when none). Parameters: group, group. */
    final String lowest;

    /** Drops every position of a group (before a repartition writes the new buckets). Parameter: group. */
    final String deleteAll;

    /**
     * The lowest position over the group's buckets (null when it has none): where a partitioned group has
     * committed everything below. Used while building statements (group listings, retention) with the group id
     * expression {@code g}.
     */
    static String lowestPosition(FamilyTables t, String g) {
        return "(SELECT min(p.position) FROM generate_series(0, greatest((SELECT max(bucket) FROM " + t.partitionCursor()
                + " WHERE consumer_group_id = " + g + "), -1)) AS b(n) CROSS JOIN LATERAL (SELECT position FROM "
                + t.partitionCursor() + " WHERE consumer_group_id = " + g + " AND bucket = b.n ORDER BY seq DESC LIMIT 1) p)";
    }

    /**
     * A member's fetch, the third statement of {@link ConsumeSql#partitionClaim} (after the fence's observation
     * and its settling, which leaves the settled head in {@code sluice.settled}): the first {@code batch} messages in
     * id order of the given buckets that lie above their bucket's position and at or below the settled head, cut
     * before the first (but the first) whose payload would pass the byte budget. Each row says its bucket and
     * whether its key is blocked — an unresolved exception row of the key (ready, deferred or in flight) below it,
     * so ordered delivery defers it. The scan walks the log's primary key from the lowest position and stops after
     * {@code batch} matches; the filter is per row (no sort of the window). The scan stays inside a {@link LogWindow}
     * from the lowest position (its bounds are plan-time constants, so only the partitions it spans are planned and
     * locked): when fewer than a batch matched, the buckets' windows end at the settled head or the window's reach,
     * whichever is lower, and the caller fetches again from there.
     *
     * <p>It also marks every bucket it hands messages of: the next version of the bucket's position, unchanged, with
     * this hand-out's highest id in {@code run_tops} — replacing the top of the run it continues (its lowest message
     * lies above that top), or added as a new run (a re-run from the position) — written before anything runs, so a
     * member that takes the bucket over after a crash knows how often each message was delivered (the tops at or
     * above its id) and counts the attempt; the commit that moves the position past a top drops it.
     *
     * <p>Returns the settled head, how many messages matched (up to batch), the highest matched id, the cut (the id
     * the batch ends at when the budget cut it, else null), then per message its bucket, blocked,
     * {@link MessageSql#FETCH_COLUMNS}, and its bucket's {@code run_tops} before this mark ({@code bucket_run_tops}) —
     * one row with null message columns when nothing matched.
     * Parameters ({@link #bindFetch}): N, buckets (int[]), positions by bucket (bigint[] of N, 1-based), the
     * window's floor (the lowest position) and reach, batch, byte budget, group, group, group, the window's floor
     * and reach.
     */
    final String fetch;

    PartitionSql(FamilyTables t) {
        String pc = t.partitionCursor();
        String current = "(SELECT * FROM " + pc + " WHERE consumer_group_id = ? AND bucket = x.bucket ORDER BY seq DESC LIMIT 1)";
        this.startPositions = "INSERT INTO " + pc + " (consumer_group_id, bucket, seq, position)"
                + " SELECT ?, b, 1, ? FROM generate_series(0, ? - 1) AS b";
        this.positions = "SELECT x.bucket, c.position FROM unnest(?::int[]) AS x(bucket)"
                + " CROSS JOIN LATERAL " + current + " c";
        this.allPositions = "SELECT b.n, c.position, c.updated_at FROM generate_series(0, greatest((SELECT max(bucket) FROM " + pc
                + " WHERE consumer_group_id = ?), -1)) AS b(n) CROSS JOIN LATERAL (SELECT * FROM " + pc
                + " WHERE consumer_group_id = ? AND bucket = b.n ORDER BY seq DESC LIMIT 1) c ORDER BY b.n";
        // The commit of positions need not wait for its WAL flush (synchronous_commit off, transaction-local): a
        // server crash can only forget the newest commits — their positions and outcome rows together, so their
        // messages run again; nothing is skipped.
        // Both this and the fetch's mark write the buckets' next versions in bucket order (their MATERIALIZED lists are
        // sorted) and only then delete the versions they replace (the deletion reads the insertion's RETURNING, so it
        // runs after it): a member's commit and its own claim that meet on the same buckets wait for each other at
        // the first shared insertion, in one order, and never deadlock (BucketMarkRaceTest).
        // The tops at or below the new position are spent (their messages are resolved) and go; the others stay (a
        // carried idle position while a batch above it runs). A fetch's mark (below) may have written version
        // seq + 1 meanwhile: the move then lands on that version.
        String above = "ARRAY(SELECT t FROM unnest(%1$s) AS t WHERE t > %2$s ORDER BY t DESC)";
        this.advance = "SELECT set_config('synchronous_commit', 'off', true);\n"
                + "WITH x AS (SELECT * FROM unnest(?::int[], ?::bigint[]) AS x(bucket, position)),"
                + " cur AS MATERIALIZED (SELECT c.consumer_group_id, c.bucket, c.seq, x.position AS next, c.run_tops"
                + "   FROM x CROSS JOIN LATERAL " + current + " c WHERE x.position > c.position ORDER BY x.bucket),"
                + " ins AS (INSERT INTO " + pc + " AS v (consumer_group_id, bucket, seq, position, run_tops)"
                + "   SELECT consumer_group_id, bucket, seq + 1, next, " + above.formatted("run_tops", "next") + " FROM cur"
                + "   ON CONFLICT (consumer_group_id, bucket, seq) DO UPDATE SET position = greatest(v.position, excluded.position),"
                + "     run_tops = " + above.formatted("v.run_tops", "greatest(v.position, excluded.position)") + ","
                + "     updated_at = now() RETURNING bucket, seq - 1 AS replaced)"
                + " DELETE FROM " + pc + " WHERE consumer_group_id = ? AND bucket = ANY(ARRAY(SELECT bucket FROM ins))"
                + "   AND seq = ANY(ARRAY(SELECT replaced FROM ins))";
        String all = "(SELECT c.* FROM generate_series(0, greatest((SELECT max(bucket) FROM " + pc
                + " WHERE consumer_group_id = ?), -1)) AS b(n) CROSS JOIN LATERAL (SELECT * FROM " + pc
                + " WHERE consumer_group_id = ? AND bucket = b.n ORDER BY seq DESC LIMIT 1) c)";
        this.setAll = "WITH v AS (SELECT ?::bigint AS position), cur AS MATERIALIZED " + all + ","
                + " ins AS (INSERT INTO " + pc + " (consumer_group_id, bucket, seq, position)"
                + "   SELECT cur.consumer_group_id, cur.bucket, cur.seq + 1, v.position FROM cur, v)"
                + " DELETE FROM " + pc + " p USING cur WHERE p.consumer_group_id = cur.consumer_group_id"
                + "   AND p.bucket = cur.bucket AND p.seq = cur.seq";
        this.deleteAll = "DELETE FROM " + pc + " WHERE consumer_group_id = ?";
        this.lowest = "SELECT " + lowestPosition(t, "?");
        String bucket = bucketOf("m.message_key", "m.id", "p.n");
        this.fetch = "WITH p AS (SELECT ?::int AS n, ?::int[] AS buckets, ?::bigint[] AS pos,"
                + "   current_setting('sluice.settled')::bigint AS settled),"
                + " cand AS (SELECT m.id, k.b, octet_length(m.payload) AS size FROM p, " + t.messageLog() + " m"
                + "   CROSS JOIN LATERAL (SELECT " + bucket + " AS b) k"
                + "   WHERE m.id > ? AND m.id <= ? AND m.id <= p.settled AND k.b = ANY(p.buckets) AND m.id > p.pos[k.b + 1]"
                + "   ORDER BY m.id LIMIT ?),"
                + " sized AS (SELECT id, b, sum(size) OVER (ORDER BY id) AS upto, row_number() OVER (ORDER BY id) AS n FROM cand),"
                + " cut AS (SELECT min(id) - 1 AS high FROM sized WHERE upto > ? AND n > 1),"
                + " picked AS (SELECT id, b FROM sized WHERE (SELECT high FROM cut) IS NULL OR id <= (SELECT high FROM cut)),"
                // The mark: each bucket handed out here gets the next version of its position, with this hand-out in
                // its run_tops, before any of it runs. A fetch whose lowest message lies above one of the live tops
                // continues the run that ended there (the member's next batch — its last one's top is the highest
                // below; no message of the bucket lies between): that top becomes this fetch's. Otherwise the fetch
                // starts from the position again (a takeover, a batch that did not commit) and adds its top. A
                // concurrent commit of the same bucket by this member (a carried position) may take seq + 1 first: the
                // mark then lands on that version, with its tops above the carried position (the top the fetch
                // replaced, if any, lies at or below it: the carry spent it too). Skipping it instead would leave the
                // hand-out unrecorded, and a takeover would deliver its messages again as attempt 1.
                // cont: the top of the run this fetch continues (the highest live top below its lowest message), if any.
                + " cur AS MATERIALIZED (SELECT c.consumer_group_id, c.bucket, c.seq, c.position, c.updated_at, c.run_tops, t.top,"
                + "     (SELECT max(u.t) FROM unnest(c.run_tops) AS u(t) WHERE u.t > c.position AND u.t < t.low) AS cont"
                + "   FROM (SELECT b, min(id) AS low, max(id) AS top FROM picked GROUP BY b) t"
                + "   CROSS JOIN LATERAL (SELECT * FROM " + pc + " WHERE consumer_group_id = ? AND bucket = t.b ORDER BY seq DESC LIMIT 1) c"
                + "   ORDER BY t.b),"
                + " mark AS (INSERT INTO " + pc + " AS v (consumer_group_id, bucket, seq, position, updated_at, run_tops)"
                + "   SELECT cur.consumer_group_id, cur.bucket, cur.seq + 1, cur.position, cur.updated_at,"
                + "     ARRAY(SELECT u.t FROM (SELECT a.t, row_number() OVER (PARTITION BY a.t) AS dup FROM unnest(cur.run_tops) AS a(t)"
                + "         WHERE a.t > cur.position) u WHERE NOT (u.dup = 1 AND u.t IS NOT DISTINCT FROM cur.cont)"
                + "       UNION ALL SELECT cur.top ORDER BY 1 DESC) FROM cur"
                + "   ON CONFLICT (consumer_group_id, bucket, seq) DO UPDATE SET run_tops = " + above.formatted("excluded.run_tops", "v.position")
                + "   RETURNING bucket, seq - 1 AS replaced),"
                + " unmark AS (DELETE FROM " + pc + " WHERE consumer_group_id = ? AND bucket = ANY(ARRAY(SELECT bucket FROM mark))"
                + "   AND seq = ANY(ARRAY(SELECT replaced FROM mark)))"
                + " SELECT p.settled, (SELECT count(*) FROM cand), (SELECT max(id) FROM cand), (SELECT high FROM cut),"
                + "   f.b, f.blocked, f.id, f.created_at, f.schema_version, f.content_type, f.routing_key, f.message_key,"
                + "   f.compaction_rank, f.headers, f.options, f.payload, f.superseded, f.run_tops AS bucket_run_tops"
                + " FROM p LEFT JOIN LATERAL (SELECT k.b, r.run_tops, (m.message_key IS NOT NULL AND EXISTS (SELECT 1 FROM " + t.exceptionQueue()
                + "     e WHERE e.consumer_group_id = ? AND e.message_key = m.message_key AND e.message_id < m.id"
                + "     AND e.status IN ('ready', 'deferred', 'inflight'))) AS blocked, " + MessageSql.FETCH_COLUMNS
                + "   FROM picked k LEFT JOIN cur r ON r.bucket = k.b JOIN " + t.messageLog() + " m ON m.id = k.id AND m.id > ? AND m.id <= ?"
                + "   LEFT JOIN " + t.compactionHead() + " h"
                + "     ON m.compaction_rank IS NOT NULL AND h.compaction_key = m.message_key) f ON true"
                + " ORDER BY f.id";
    }

    /** Binds {@link #fetch}'s parameters from {@code first} on. */
    static int bindFetch(java.sql.PreparedStatement ps, int first, java.sql.Connection c, int n, Integer[] buckets, Long[] posByBucket,
                         LogWindow window, int batch, long maxBytes, long group) throws java.sql.SQLException {
        int i = first;
        ps.setInt(i++, n);
        ps.setArray(i++, c.createArrayOf("int4", buckets));
        ps.setArray(i++, c.createArrayOf("int8", posByBucket));
        ps.setLong(i++, window.floor());
        ps.setLong(i++, window.reach());
        ps.setInt(i++, batch);
        ps.setLong(i++, maxBytes);
        ps.setLong(i++, group); // the mark: the buckets' current versions
        ps.setLong(i++, group); // the mark: the versions it replaced
        ps.setLong(i++, group);
        ps.setLong(i++, window.floor());
        ps.setLong(i++, window.reach());
        return i;
    }
}
