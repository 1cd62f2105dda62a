package dev.sluice.internal.consume;

import dev.sluice.internal.schema.FamilyTables;

/**
 * Owner of {@code consumer_group_cursor_<id>} and {@code claim_lease_<id>}: every statement that writes either
 * table, built once per stream ({@link ConsumeSql#of}). One owner holds the pair because the fenced claim writes
 * the cursor's next version and the range's lease in one statement — that is the point of it (docs/consume.md,
 * docs/fence.md). The cursor is append-only (every change writes version seq + 1 and deletes the one it
 * replaces); committed is derived from the live leases ({@link #committedNow}).
 */
final class RangeSql {
    /** Takes the group's cursor lock for the rest of the transaction. Parameter: {@link #cursorLockKey}. */
    static final String LOCK_CURSOR = "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))";

    private final FamilyTables t;

    /**
     * The group's current cursor as a FROM item: its newest version. The cursor is append-only, so this
     * backward scan of the primary key finds the live version first and never walks old ones, however many a
     * held xmin horizon keeps (docs/fence.md). Parameter: group.
     */
    final String cursor;

    /**
     * A scalar subquery: the committed position stored in the group's cursor. Every live lease of the group
     * lies above it (a claim stores committed = just below its lowest live lease; new leases start above
     * claimed), so lease lookups scan {@code (group, low)} from there and never walk the leases completed
     * before it. Parameter: group.
     */
    final String committedFloor;

    /**
     * Read-only probe of an idle group: allocates no transaction id. Returns the cursor, the stream's
     * head and the next due times (expired ranges, due exception rows, expired row leases).
     * Parameter: group.
     */
    final String probe;

    /** The first version of a new group's cursor. Parameters: group, start position (claimed = committed = settled). */
    final String startCursor;

    /**
     * Rewinds the cursor under its lock: writes the next version with claimed = committed = the position and
     * deletes the current one; the pending observation is kept, and settled_head never moves back (everything
     * below the old settled head is resolved). Parameters: group, position, position, position.
     */
    final String rewindCursor;

    /** Drops every range lease of a group (a rewind, under the cursor lock). Parameter: group. */
    final String deleteLeases;

    /**
     * The claim of a fresh range, fetch included, in ONE round trip: two statements sent together
     * (one Sync, so one implicit transaction that commits when the second ends).
     *
     * <p>Statement 1 is the fence observation (docs/fence.md, {@link SnapshotFence}): it reads the head, then takes
     * this transaction's xid (MATERIALIZED keeps that order) and, unless its snapshot shows no older transaction
     * at all, reads {@code pg_locks} once to find the observation's holders — the older transactions its snapshot
     * does not see as ended that hold this stream's log lock. The head and the holders go to transaction-local
     * settings. Its snapshot is the statement's own, taken before the head was read: every producer it cannot
     * see has an xid in its running list or at or above its xmax, and below ours, so it is a candidate; one that
     * no longer shows the log's lock has ended, and statement 2's snapshot — taken after the lock read — sees it.
     * Statement 2 runs with a new snapshot. With no holders the observation settles at once (unrelated
     * transactions never hold the fence); otherwise it becomes the group's pending observation
     * ({@code pending_xids}) unless one is pending already, and settles once a later snapshot sees every holder
     * ended. Statement 2 promotes a settled pending observation, claims [claimed+1, min(claimed+batch, settled)],
     * writes the range's lease, and reads the range's messages with its snapshot (every id in the range is
     * settled, so the snapshot sees every committed message in it), plus the group's bindings with the head
     * (exact for ids up to that head, as {@link MessageSql#bindings}).
     *
     * <p>The claim commits with {@code synchronous_commit = off}: losing it in a server crash only
     * un-claims the range (its messages are delivered again); the completion, which is what makes
     * progress final, commits synchronously and so also flushes every claim before it.
     *
     * <p>The range also ends before the first message (other than its first) whose payload would take the
     * range's payloads past the byte budget, so one claim's fetch stays within it; the next claim continues
     * right after (nothing skipped, nothing delivered twice).
     *
     * <p>Claims serialise on the group's cursor lock ({@link #cursorLockKey}), taken in statement 1 so that
     * statement 2's snapshot sees the cursor version the previous claim wrote (a row lock taken there would wait
     * with a snapshot from before that commit; one taken in statement 1 would allocate the xid before the head
     * is read, which the fence's proof forbids). Statement 2 reads the newest cursor version, derives committed
     * from the live leases, and — unless nothing changed — writes the next version and deletes the current one.
     *
     * <p>The claim stays inside a window of the log the caller names ({@link LogWindow}): ids above its floor and up
     * to its reach, bound as constants so the planner prunes {@code message_log} to the partitions the window
     * spans — a lagging group keeps many partitions, and a claim that planned or locked all of them would cost more
     * the further it lags. A cursor below the floor or at the reach claims nothing (the caller moves the window to
     * the old claimed position it gets back and claims again).
     *
     * <p>Parameters ({@link #bindClaim}): cursor lock key, group, batch, byte budget, owner token, lease seconds,
     * the window.
     * Statement 2 returns one row per message of the new range (one row with null message columns when nothing
     * was claimed): old claimed, new claimed, pending, lease id, observed head, bindings (json), head, then
     * {@link MessageSql#FETCH_COLUMNS}.
     */
    final String claim;

    /**
     * Statements 1 and 2 of a partitioned group's claim ({@link ConsumeSql#partitionClaim}): the same fenced
     * observation as {@link #claim}, settled the same way, but nothing is claimed here — the members' buckets have
     * positions of their own ({@link PartitionSql}). The cursor keeps the fence: its next version (when anything
     * changed) has claimed = committed = settled_head = the settled head, which statement 2 also leaves in the
     * transaction-local setting {@code sluice.settled} for the fetch that follows. Statement 2 returns: set_config,
     * pending, observed head, bindings (json), head. Parameters: cursor lock key, group.
     */
    final String partitionObserve;

    /** Whether the pending observation has settled (read-only). Parameter: group. */
    final String settled;

    /** Takes over the lowest expired range; a released range's takeover is not counted as a reclaim. */
    final String reclaimRange;

    /**
     * Completing a range: only the live holder may (stale holders change nothing). Nothing else is written:
     * committed follows from the leases left ({@link #committedNow}), and the next claim stores it. The holder is the
     * owner token <em>and</em> the claim's {@code reclaims}: a consumer that takes its own expired range over (its
     * renewal came late) holds it again under the same token, and its earlier holding — still running a chain — must
     * be as stale as another consumer's would be. Parameters: lease id, owner token, reclaims.
     */
    final String completeRange;

    /**
     * Releasing a range on a clean stop: taken over at once, resolved ids kept; the takeover is not counted as a
     * reclaim when {@code released} is set (nothing started there is without an outcome). Parameters: released,
     * resolved ids, lease id, owner token, reclaims.
     */
    final String releaseRange;

    /**
     * Renews ranges with their resolved ids. Parameters: lease seconds, ids, resolved ids (as array texts), reclaims
     * (the holding renewed, as for {@link #completeRange}), the same ids again, owner. The second list of ids is the index condition: a bare join with the unnested ids
     * lets the planner scan the whole table, and with it every lease a held xmin keeps.
     */
    final String renewRanges;

    /**
     * The groups of a stream with their progress (read-only): id, name, config, created at, claimed, committed
     * now, ready/deferred/inflight/dead row counts, open ranges. Parameters: stream id, name or null, name.
     */
    final String groupList;

    /**
     * The lowest committed position over the stream's groups as of now ({@link #committedNow}), null when the stream
     * has no group (read-only; retention keeps every partition above it). Parameter: stream id.
     */
    final String lowestCommitted;

    /**
     * Whether a range lease of any group of the stream (live, or expired and not yet taken over) overlaps ids
     * {@code [low, high)} (read-only). Parameters: stream id, high, low.
     */
    final String leasesInRange;

    RangeSql(FamilyTables t) {
        this.t = t;
        String head = MessageSql.head(t);
        this.cursor = "(SELECT * FROM " + t.consumerGroupCursor() + " WHERE consumer_group_id = ? ORDER BY seq DESC LIMIT 1)";
        this.committedFloor = "(SELECT committed FROM " + t.consumerGroupCursor()
                + " WHERE consumer_group_id = ? ORDER BY seq DESC LIMIT 1)";
        this.probe = "SELECT c.claimed, c.settled_head, c.pending_xids IS NOT NULL,  " + head + ","
                + " (SELECT min(expires_at) FROM " + t.claimLease() + " WHERE consumer_group_id = c.consumer_group_id"
                + "   AND low > c.committed),"
                + " (SELECT min(can_run_after) FROM " + t.exceptionQueue()
                + "   WHERE consumer_group_id = c.consumer_group_id AND status IN ('ready', 'deferred')),"
                + " (SELECT min(lease_expires_at) FROM " + t.exceptionQueue()
                + "   WHERE consumer_group_id = c.consumer_group_id AND status = 'inflight'),"
                + " now()"
                + " FROM " + cursor + " c";
        this.startCursor = "INSERT INTO " + t.consumerGroupCursor() + " (consumer_group_id, seq, claimed, committed, settled_head)"
                + " VALUES (?, 1, ?, ?, ?)";
        this.rewindCursor = "WITH cur AS MATERIALIZED " + cursor + ","
                + " ver AS (INSERT INTO " + t.consumerGroupCursor()
                + "   (consumer_group_id, seq, claimed, committed, settled_head, pending_head, pending_xids)"
                + "   SELECT consumer_group_id, seq + 1, ?, ?, greatest(settled_head, ?), pending_head, pending_xids FROM cur)"
                + " DELETE FROM " + t.consumerGroupCursor()
                + " WHERE consumer_group_id = (SELECT consumer_group_id FROM cur) AND seq = (SELECT seq FROM cur)";
        this.deleteLeases = "DELETE FROM " + t.claimLease() + " WHERE consumer_group_id = ?";
        // Statement 1 of a fenced claim: the observation (parameter: the cursor lock key).
        String observation = "WITH " + SnapshotFence.observationCtes(t)
                + " SELECT set_config('sluice.observed_head', o.head::text, true),"
                + " set_config('synchronous_commit', 'off', true),"
                + " set_config('sluice.fence_holders', " + SnapshotFence.HOLDERS + "::text, true),"
                + " pg_advisory_xact_lock(hashtextextended(?, 0)) FROM o;\n";
        // Statement 2's start: the current cursor and the settled head after this observation (parameter: group).
        String settling = "WITH obs AS (SELECT current_setting('sluice.observed_head')::bigint AS head,"
                + "   current_setting('sluice.fence_holders')::xid8[] AS holders),"
                + " snap AS MATERIALIZED (SELECT pg_current_snapshot() AS s),"
                + " cur AS MATERIALIZED " + cursor + ","
                + " n AS (SELECT cur.consumer_group_id, cur.seq, cur.claimed, cur.committed AS stored_committed,"
                + "   " + committedNow(t, "cur") + " AS committed, cur.pending_head, cur.pending_xids,"
                + "   obs.head AS observed, obs.holders,"
                + "   (cur.pending_xids IS NOT NULL AND " + SnapshotFence.ended("cur.pending_xids", "snap.s") + ") AS promoted,"
                + "   cur.settled_head FROM cur, snap, obs),"
                + " p AS (SELECT n.*, (n.promoted OR n.pending_xids IS NULL) AS free,"
                + "   CASE WHEN n.promoted THEN greatest(n.settled_head, n.pending_head) ELSE n.settled_head END AS settled0 FROM n),"
                + " m AS (SELECT p.*, CASE WHEN p.holders = '{}' THEN greatest(p.settled0, p.observed) ELSE p.settled0 END AS settled"
                + "   FROM p),";
        // The pending observation after this one, over a FROM item with settled, free, observed, holders.
        String nextPending = "CASE WHEN r.holders = '{}' THEN NULL WHEN r.free AND r.observed > r.settled THEN r.observed"
                + "     WHEN r.free THEN NULL ELSE r.pending_head END AS new_pending_head,"
                + "   CASE WHEN r.holders = '{}' THEN NULL WHEN r.free AND r.observed > r.settled THEN r.holders"
                + "     WHEN r.free THEN NULL ELSE r.pending_xids END AS new_pending_xids";
        String bindingsOf = "(SELECT json_agg(json_build_array(b.pattern, b.from_message_id, b.until_message_id))"
                + "     FROM " + t.bindingConfig() + " b WHERE b.consumer_group_id = u.consumer_group_id)::text";
        this.partitionObserve = observation + settling
                + " nxt AS (SELECT r.*, " + nextPending + " FROM m r),"
                + " chg AS (SELECT * FROM nxt WHERE claimed <> settled OR stored_committed <> settled OR settled <> settled_head"
                + "   OR new_pending_head IS DISTINCT FROM pending_head OR new_pending_xids IS DISTINCT FROM pending_xids),"
                + " ver AS (INSERT INTO " + t.consumerGroupCursor()
                + "   (consumer_group_id, seq, claimed, committed, settled_head, pending_head, pending_xids)"
                + "   SELECT consumer_group_id, seq + 1, settled, settled, settled, new_pending_head, new_pending_xids FROM chg),"
                + " old AS (DELETE FROM " + t.consumerGroupCursor()
                + "   WHERE consumer_group_id = (SELECT consumer_group_id FROM chg) AND seq = (SELECT seq FROM chg))"
                + " SELECT set_config('sluice.settled', u.settled::text, true), u.new_pending_xids IS NOT NULL, u.observed, "
                + bindingsOf + ", " + head + " FROM nxt u;\n";
        this.claim = observation + settling
                // The log window (parameters: its floor and reach, as plan-time constants): a cursor outside it claims nothing.
                + " r AS (SELECT m.*, CASE WHEN m.claimed < ?::bigint THEN m.claimed"
                + "   ELSE greatest(m.claimed, least(m.claimed + ?, m.settled, ?::bigint)) END AS high FROM m),"
                // The byte budget: payload sizes only (octet_length reads a stored value's length, not the value).
                + " sized AS (SELECT l.id, sum(octet_length(l.payload)) OVER (ORDER BY l.id) AS upto,"
                + "   row_number() OVER (ORDER BY l.id) AS n FROM r JOIN " + t.messageLog() + " l"
                + "   ON l.id BETWEEN r.claimed + 1 AND r.high AND l.id > ? AND l.id <= ?),"
                + " cut AS (SELECT min(id) - 1 AS high FROM sized WHERE upto > ? AND n > 1),"
                + " nxt AS (SELECT r.*, coalesce((SELECT high FROM cut), r.high) AS new_claimed, " + nextPending + " FROM r),"
                // A claim that changes nothing writes nothing; otherwise the next version replaces the current one.
                + " chg AS (SELECT * FROM nxt WHERE new_claimed <> claimed OR settled <> settled_head"
                + "   OR committed <> stored_committed OR new_pending_head IS DISTINCT FROM pending_head"
                + "   OR new_pending_xids IS DISTINCT FROM pending_xids),"
                + " ver AS (INSERT INTO " + t.consumerGroupCursor()
                + "   (consumer_group_id, seq, claimed, committed, settled_head, pending_head, pending_xids)"
                + "   SELECT consumer_group_id, seq + 1, new_claimed, committed, settled, new_pending_head, new_pending_xids FROM chg),"
                // Scalar subqueries, not a join: the key must reach the index as its condition (a join lets the
                // planner walk the whole index, every old version a held xmin keeps included).
                + " old AS (DELETE FROM " + t.consumerGroupCursor()
                + "   WHERE consumer_group_id = (SELECT consumer_group_id FROM chg) AND seq = (SELECT seq FROM chg)),"
                + " ins AS (INSERT INTO " + t.claimLease() + " (consumer_group_id, low, high, owner_token, expires_at)"
                + "   SELECT consumer_group_id, claimed + 1, new_claimed, ?, now() + make_interval(secs => ?) FROM nxt"
                + "   WHERE new_claimed > claimed RETURNING id)"
                + " SELECT u.claimed, u.new_claimed, u.new_pending_xids IS NOT NULL, (SELECT id FROM ins), u.observed,"
                + "   " + bindingsOf + ", " + head + ", f.*"
                + " FROM nxt u LEFT JOIN LATERAL (SELECT " + MessageSql.FETCH_COLUMNS
                + "   FROM " + t.messageLog() + " m LEFT JOIN " + t.compactionHead() + " h"
                + "     ON m.compaction_rank IS NOT NULL AND h.compaction_key = m.message_key"
                + "   WHERE u.new_claimed > u.claimed AND m.id BETWEEN u.claimed + 1 AND u.new_claimed"
                + "   AND m.id > ? AND m.id <= ?) f ON true"
                + " ORDER BY f.id";
        this.settled = "SELECT c.pending_xids IS NULL OR " + SnapshotFence.ended("c.pending_xids", "pg_current_snapshot()")
                + " FROM " + cursor + " c";
        this.reclaimRange = "UPDATE " + t.claimLease() + " SET owner_token = ?, expires_at = now() + make_interval(secs => ?),"
                + " reclaims = reclaims + CASE WHEN released THEN 0 ELSE 1 END, released = false"
                + " WHERE id = (SELECT id FROM " + t.claimLease() + " WHERE consumer_group_id = ? AND low > " + committedFloor
                + "   AND expires_at <= now() ORDER BY low LIMIT 1 FOR UPDATE SKIP LOCKED)"
                + " RETURNING id, low, high, reclaims, resolved";
        this.completeRange = "DELETE FROM " + t.claimLease() + " WHERE id = ? AND owner_token = ? AND reclaims = ?"
                + " AND expires_at > now() RETURNING low";
        this.releaseRange = "UPDATE " + t.claimLease() + " SET expires_at = now(), released = ?, resolved = ?"
                + " WHERE id = ? AND owner_token = ? AND reclaims = ? AND expires_at > now()";
        this.renewRanges = "UPDATE " + t.claimLease() + " l SET expires_at = now() + make_interval(secs => ?), resolved = r.resolved"
                + " FROM (SELECT * FROM unnest(?::bigint[], ?::text[], ?::int[]) AS x(id, resolved_text, reclaims)) x,"
                + "   LATERAL (SELECT x.resolved_text::bigint[] AS resolved) r"
                + " WHERE l.id = ANY(?::bigint[]) AND l.id = x.id AND l.owner_token = ? AND l.reclaims = x.reclaims"
                + " AND l.expires_at > now() RETURNING l.id";
        this.groupList = "SELECT g.id, g.name, g.config::text, g.created_at, c.claimed, "
                + progressNow(t, "c", "g.id") + ","
                + " (SELECT count(*) FROM " + t.exceptionQueue() + " e WHERE e.consumer_group_id = g.id AND e.status = 'ready'),"
                + " (SELECT count(*) FROM " + t.exceptionQueue() + " e WHERE e.consumer_group_id = g.id AND e.status = 'deferred'),"
                + " (SELECT count(*) FROM " + t.exceptionQueue() + " e WHERE e.consumer_group_id = g.id AND e.status = 'inflight'),"
                + " (SELECT count(*) FROM " + t.exceptionQueue() + " e WHERE e.consumer_group_id = g.id AND e.status = 'dead'),"
                + " (SELECT count(*) FROM " + t.claimLease() + " l WHERE l.consumer_group_id = g.id AND l.low > c.committed)"
                + " FROM " + t.quotedSchema() + ".consumer_group_config g CROSS JOIN LATERAL (SELECT * FROM " + t.consumerGroupCursor()
                + "   WHERE consumer_group_id = g.id ORDER BY seq DESC LIMIT 1) c"
                + " WHERE g.stream_id = ? AND (?::text IS NULL OR g.name = ?) ORDER BY g.name";
        String groupsWithCursor = " FROM " + t.quotedSchema() + ".consumer_group_config g CROSS JOIN LATERAL (SELECT * FROM "
                + t.consumerGroupCursor() + " WHERE consumer_group_id = g.id ORDER BY seq DESC LIMIT 1) c WHERE g.stream_id = ?";
        this.lowestCommitted = "SELECT min(" + progressNow(t, "c", "g.id") + ")" + groupsWithCursor;
        this.leasesInRange = "SELECT EXISTS (SELECT 1" + groupsWithCursor + " AND EXISTS (SELECT 1 FROM " + t.claimLease() + " l"
                + "   WHERE l.consumer_group_id = g.id AND l.low > c.committed AND l.low < ? AND l.high >= ?))";
    }

    /**
     * An expression over the cursor {@code c}: committed as of now — just below the lowest live lease, or
     * claimed when none is open. Completions write nothing to the cursor (they delete their lease), so
     * readers derive it; it is exact for the reader's snapshot. Used while building statements only.
     */
    static String committedNow(FamilyTables t, String c) {
        return "coalesce((SELECT min(l.low) - 1 FROM " + t.claimLease() + " l WHERE l.consumer_group_id = " + c
                + ".consumer_group_id AND l.low > " + c + ".committed), " + c + ".claimed)";
    }

    /**
     * As {@link #committedNow}, for any group: a partitioned group's committed position is its lowest bucket position
     * ({@link PartitionSql#lowestPosition}); other groups have no bucket positions. Read paths only.
     */
    static String progressNow(FamilyTables t, String c, String g) {
        return "coalesce(" + PartitionSql.lowestPosition(t, g) + ", " + committedNow(t, c) + ")";
    }

    /** The advisory key text that serialises the group's cursor writers (claims and rewinds) for a transaction. */
    String cursorLockKey(long groupId) {
        return "sluice.cursor:" + t.quotedSchema() + ":" + groupId;
    }

    /** Binds {@link #claim}'s parameters. */
    void bindClaim(java.sql.PreparedStatement ps, long group, long batch, long maxBytes, java.util.UUID owner,
                   double leaseSeconds, LogWindow window) throws java.sql.SQLException {
        ps.setString(1, cursorLockKey(group));
        ps.setLong(2, group);
        ps.setLong(3, window.floor());
        ps.setLong(4, batch);
        ps.setLong(5, window.reach());
        ps.setLong(6, window.floor());
        ps.setLong(7, window.reach());
        ps.setLong(8, maxBytes);
        ps.setObject(9, owner);
        ps.setDouble(10, leaseSeconds);
        ps.setLong(11, window.floor());
        ps.setLong(12, window.reach());
    }
}
