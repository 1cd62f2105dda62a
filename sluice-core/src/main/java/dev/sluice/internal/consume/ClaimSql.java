package dev.sluice.internal.consume;

import dev.sluice.internal.schema.FamilyTables;

/** Every statement of the claim path and of outcomes, in one place (docs/consume.md). */
final class ClaimSql {
    private ClaimSql() {
    }

    /** A scalar subquery: the highest id drawn from the stream's sequence (no xid, no scan). */
    static String head(FamilyTables t) {
        return "(SELECT " + t.headExpression() + ")";
    }

    /**
     * The group's current cursor as a FROM item: its newest version. The cursor is append-only (every change
     * writes version seq + 1 and deletes the one it replaces), so this backward scan of the primary key finds
     * the live version first and never walks old ones, however many a held xmin horizon keeps (docs/fence.md).
     * Parameter: group.
     */
    static String cursor(FamilyTables t) {
        return "(SELECT * FROM " + t.consumerGroupCursor() + " WHERE consumer_group_id = ? ORDER BY seq DESC LIMIT 1)";
    }

    /**
     * A scalar subquery: the committed position stored in the group's cursor. Every live lease of the group
     * lies above it (a claim stores committed = just below its lowest live lease; new leases start above
     * claimed), so lease lookups scan {@code (group, low)} from there and never walk the leases completed
     * before it. Parameter: group.
     */
    static String committedFloor(FamilyTables t) {
        return "(SELECT committed FROM " + t.consumerGroupCursor() + " WHERE consumer_group_id = ? ORDER BY seq DESC LIMIT 1)";
    }

    /**
     * An expression over the cursor {@code c}: committed as of now — just below the lowest live lease, or
     * claimed when none is open. Completions write nothing to the cursor (they delete their lease), so
     * readers derive it; it is exact for the reader's snapshot.
     */
    static String committedNow(FamilyTables t, String c) {
        return "coalesce((SELECT min(l.low) - 1 FROM " + t.claimLease() + " l WHERE l.consumer_group_id = " + c
                + ".consumer_group_id AND l.low > " + c + ".committed), " + c + ".claimed)";
    }

    /** The advisory key text that serialises the group's cursor writers (claims and rewinds) for a transaction. */
    static String cursorLockKey(FamilyTables t, long groupId) {
        return "sluice.cursor:" + t.quotedSchema() + ":" + groupId;
    }

    /** Takes the group's cursor lock for the rest of the transaction. Parameter: {@link #cursorLockKey}. */
    static final String LOCK_CURSOR = "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))";

    /**
     * Read-only probe of an idle group: allocates no transaction id. Returns the cursor, the stream's
     * head and the next due times (expired ranges, due exception rows, expired row leases).
     * Parameter: group.
     */
    static String probe(FamilyTables t) {
        return "SELECT c.claimed, c.settled_head, c.pending_xids IS NOT NULL,  " + head(t) + ","
                + " (SELECT min(expires_at) FROM " + t.claimLease() + " WHERE consumer_group_id = c.consumer_group_id"
                + "   AND low > c.committed),"
                + " (SELECT min(can_run_after) FROM " + t.exceptionQueue()
                + "   WHERE consumer_group_id = c.consumer_group_id AND status IN ('ready', 'deferred')),"
                + " (SELECT min(lease_expires_at) FROM " + t.exceptionQueue()
                + "   WHERE consumer_group_id = c.consumer_group_id AND status = 'inflight'),"
                + " now()"
                + " FROM " + cursor(t) + " c";
    }

    /** The first version of a new group's cursor. Parameters: group, start position (claimed = committed = settled). */
    static String startCursor(FamilyTables t) {
        return "INSERT INTO " + t.consumerGroupCursor() + " (consumer_group_id, seq, claimed, committed, settled_head)"
                + " VALUES (?, 1, ?, ?, ?)";
    }

    /**
     * Rewinds the cursor under its lock: writes the next version with claimed = committed = the position and
     * deletes the current one; the pending observation is kept, and settled_head never moves back (everything
     * below the old settled head is resolved). Parameters: group, position, position, position.
     */
    static String rewindCursor(FamilyTables t) {
        return "WITH cur AS MATERIALIZED " + cursor(t) + ","
                + " ver AS (INSERT INTO " + t.consumerGroupCursor()
                + "   (consumer_group_id, seq, claimed, committed, settled_head, pending_head, pending_xids)"
                + "   SELECT consumer_group_id, seq + 1, ?, ?, greatest(settled_head, ?), pending_head, pending_xids FROM cur)"
                + " DELETE FROM " + t.consumerGroupCursor()
                + " WHERE consumer_group_id = (SELECT consumer_group_id FROM cur) AND seq = (SELECT seq FROM cur)";
    }

    /** The columns of a fetched message, in the order {@code GroupConsumer.fetched} reads them. */
    private static final String FETCH_COLUMNS = "m.id, m.created_at, m.schema_version, m.content_type, m.routing_key,"
            + " m.message_key, m.compaction_rank, m.headers::text, m.options::text, m.payload,"
            + " (m.compaction_rank IS NOT NULL AND h.message_id IS DISTINCT FROM m.id) AS superseded";

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
     * (exact for ids up to that head, as {@link #bindings}).
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
     * <p>Parameters: cursor lock key, group, batch, byte budget, owner token, lease seconds. Statement 2 returns one
     * row per message of the new range (one row with null message columns when nothing was claimed): old
     * claimed, new claimed, pending, lease id, observed head, bindings (json), head, then
     * {@link #FETCH_COLUMNS}.
     */
    static String claim(FamilyTables t) {
        return "WITH " + SnapshotFence.observationCtes(t)
                + " SELECT set_config('sluice.observed_head', o.head::text, true),"
                + " set_config('synchronous_commit', 'off', true),"
                + " set_config('sluice.fence_holders', " + SnapshotFence.HOLDERS + "::text, true),"
                + " pg_advisory_xact_lock(hashtextextended(?, 0)) FROM o;\n"
                + "WITH obs AS (SELECT current_setting('sluice.observed_head')::bigint AS head,"
                + "   current_setting('sluice.fence_holders')::xid8[] AS holders),"
                + " snap AS MATERIALIZED (SELECT pg_current_snapshot() AS s),"
                + " cur AS MATERIALIZED " + cursor(t) + ","
                + " n AS (SELECT cur.consumer_group_id, cur.seq, cur.claimed, cur.committed AS stored_committed,"
                + "   " + committedNow(t, "cur") + " AS committed, cur.pending_head, cur.pending_xids,"
                + "   obs.head AS observed, obs.holders,"
                + "   (cur.pending_xids IS NOT NULL AND " + SnapshotFence.ended("cur.pending_xids", "snap.s") + ") AS promoted,"
                + "   cur.settled_head FROM cur, snap, obs),"
                + " p AS (SELECT n.*, (n.promoted OR n.pending_xids IS NULL) AS free,"
                + "   CASE WHEN n.promoted THEN greatest(n.settled_head, n.pending_head) ELSE n.settled_head END AS settled0 FROM n),"
                + " m AS (SELECT p.*, CASE WHEN p.holders = '{}' THEN greatest(p.settled0, p.observed) ELSE p.settled0 END AS settled"
                + "   FROM p),"
                + " r AS (SELECT m.*, greatest(m.claimed, least(m.claimed + ?, m.settled)) AS high FROM m),"
                // The byte budget: payload sizes only (octet_length reads a stored value's length, not the value).
                + " sized AS (SELECT l.id, sum(octet_length(l.payload)) OVER (ORDER BY l.id) AS upto,"
                + "   row_number() OVER (ORDER BY l.id) AS n FROM r JOIN " + t.messageLog() + " l"
                + "   ON l.id BETWEEN r.claimed + 1 AND r.high),"
                + " cut AS (SELECT min(id) - 1 AS high FROM sized WHERE upto > ? AND n > 1),"
                + " nxt AS (SELECT r.*, coalesce((SELECT high FROM cut), r.high) AS new_claimed,"
                + "   CASE WHEN r.holders = '{}' THEN NULL WHEN r.free AND r.observed > r.settled THEN r.observed"
                + "     WHEN r.free THEN NULL ELSE r.pending_head END AS new_pending_head,"
                + "   CASE WHEN r.holders = '{}' THEN NULL WHEN r.free AND r.observed > r.settled THEN r.holders"
                + "     WHEN r.free THEN NULL ELSE r.pending_xids END AS new_pending_xids FROM r),"
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
                + "   (SELECT json_agg(json_build_array(b.pattern, b.from_message_id, b.until_message_id))"
                + "     FROM " + t.bindingConfig() + " b WHERE b.consumer_group_id = u.consumer_group_id)::text, " + head(t) + ", f.*"
                + " FROM nxt u LEFT JOIN LATERAL (SELECT " + FETCH_COLUMNS
                + "   FROM " + t.messageLog() + " m LEFT JOIN " + t.compactionHead() + " h"
                + "     ON m.compaction_rank IS NOT NULL AND h.compaction_key = m.message_key"
                + "   WHERE u.new_claimed > u.claimed AND m.id BETWEEN u.claimed + 1 AND u.new_claimed) f ON true"
                + " ORDER BY f.id";
    }

    /** Binds {@link #claim}'s parameters. */
    static void bindClaim(java.sql.PreparedStatement ps, FamilyTables t, long group, long batch, long maxBytes, java.util.UUID owner,
                          double leaseSeconds) throws java.sql.SQLException {
        ps.setString(1, cursorLockKey(t, group));
        ps.setLong(2, group);
        ps.setLong(3, batch);
        ps.setLong(4, maxBytes);
        ps.setObject(5, owner);
        ps.setDouble(6, leaseSeconds);
    }

    /** Whether the pending observation has settled (read-only). */
    static String settled(FamilyTables t) {
        return "SELECT c.pending_xids IS NULL OR " + SnapshotFence.ended("c.pending_xids", "pg_current_snapshot()") + " FROM "
                + cursor(t) + " c";
    }

    /** Takes over the lowest expired range; a released range's takeover is not counted as a reclaim. */
    static String reclaimRange(FamilyTables t) {
        return "UPDATE " + t.claimLease() + " SET owner_token = ?, expires_at = now() + make_interval(secs => ?),"
                + " reclaims = reclaims + CASE WHEN released THEN 0 ELSE 1 END, released = false"
                + " WHERE id = (SELECT id FROM " + t.claimLease() + " WHERE consumer_group_id = ? AND low > " + committedFloor(t)
                + "   AND expires_at <= now() ORDER BY low LIMIT 1 FOR UPDATE SKIP LOCKED)"
                + " RETURNING id, low, high, reclaims, resolved";
    }

    /** Turns a poison range's unresolved messages into individual ready rows and drops the range. */
    static String quarantine(FamilyTables t) {
        return "WITH l AS (DELETE FROM " + t.claimLease() + " WHERE id = ? RETURNING low, high, resolved, reclaims)"
                + " INSERT INTO " + t.exceptionQueue() + " (consumer_group_id, message_id, status, message_key, concurrency,"
                + "   attempts, can_run_after, last_error)"
                + " SELECT ?, m.id, 'ready', m.message_key, ?, l.reclaims, now(),"
                + "   'quarantined: its range was reclaimed ' || l.reclaims || ' times'"
                + " FROM l JOIN " + t.messageLog() + " m ON m.id BETWEEN l.low AND l.high"
                + " WHERE NOT (m.id = ANY(l.resolved))"
                + " ON CONFLICT (consumer_group_id, message_id) DO NOTHING";
    }

    /**
     * Claims due rows (ready or deferred) and rows whose lease expired, with SKIP LOCKED; attempts counted here.
     * For keyed policies only rows that can run now are taken, so same-key rows do not churn through
     * claim-block-defer cycles (and, under a backlog, bury the one row per key that can make progress):
     * {@code ordered} takes a keyed row only when it is the lowest unresolved row of its key;
     * {@code exclusive} takes the lowest due row per key, and none of a key with a row in flight.
     *
     * <p>An expired lease is a delivery that never finished, and counts as an attempt: an expired row
     * that has used the group's {@code maxAttempts} goes {@code dead} here (last error "expired: …")
     * instead of being claimed again, and each expiry is written to the delivery log ({@code expired},
     * or {@code dead} for the last one) when the group logs failures — all in the claim's one statement.
     * Parameters: group, group, batch (due); group, batch (expired); maxAttempts, group, maxAttempts
     * (spent); group, maxAttempts, maxAttempts, log (logged); owner, lease seconds, group, maxAttempts (claim).
     */
    static String claimRows(FamilyTables t, dev.sluice.ConcurrencyPolicy policy) {
        String candidates = switch (policy) {
            case PARALLEL -> "SELECT message_id FROM " + t.exceptionQueue()
                    + "   WHERE consumer_group_id = ? AND status IN ('ready', 'deferred') AND can_run_after <= now()";
            case ORDERED -> "SELECT h.message_id FROM (SELECT DISTINCT ON (message_key, CASE WHEN message_key IS NULL THEN message_id END)"
                    + "     message_id, status, can_run_after FROM " + t.exceptionQueue()
                    + "     WHERE consumer_group_id = ? AND status IN ('ready', 'deferred', 'inflight')"
                    + "     ORDER BY message_key, CASE WHEN message_key IS NULL THEN message_id END, message_id) h"
                    + "   WHERE h.status IN ('ready', 'deferred') AND h.can_run_after <= now()";
            case EXCLUSIVE -> "SELECT h.message_id FROM (SELECT DISTINCT ON (message_key, CASE WHEN message_key IS NULL THEN message_id END)"
                    + "     e.message_id FROM " + t.exceptionQueue() + " e"
                    + "     WHERE e.consumer_group_id = ? AND e.status IN ('ready', 'deferred') AND e.can_run_after <= now()"
                    + "     AND (e.message_key IS NULL OR NOT EXISTS (SELECT 1 FROM " + t.exceptionQueue() + " i"
                    + "       WHERE i.consumer_group_id = e.consumer_group_id AND i.message_key = e.message_key"
                    + "       AND i.status = 'inflight' AND i.lease_expires_at > now()))"
                    + "     ORDER BY message_key, CASE WHEN message_key IS NULL THEN message_id END, message_id) h";
        };
        return "WITH due AS (SELECT message_id FROM " + t.exceptionQueue()
                + "   WHERE consumer_group_id = ? AND message_id IN (" + candidates + ")"
                + "   AND status IN ('ready', 'deferred') AND can_run_after <= now()"
                + "   ORDER BY can_run_after, message_id LIMIT ? FOR UPDATE SKIP LOCKED),"
                + " expired AS MATERIALIZED (SELECT message_id, attempts FROM " + t.exceptionQueue()
                + "   WHERE consumer_group_id = ? AND status = 'inflight' AND lease_expires_at <= now()"
                + "   ORDER BY lease_expires_at LIMIT ? FOR UPDATE SKIP LOCKED),"
                + " spent AS (UPDATE " + t.exceptionQueue() + " e SET status = 'dead', dead_at = now(),"
                + "   last_error = 'expired: the lease of delivery ' || e.attempts || ' of ' || ?::int"
                + "     || ' ran out before its handler finished', error_stack = NULL,"
                + "   lease_owner = NULL, lease_expires_at = NULL, updated_at = now()"
                + "   WHERE e.consumer_group_id = ? AND e.message_id IN (SELECT message_id FROM expired WHERE attempts >= ?)"
                + "   RETURNING e.message_id, e.attempts, e.last_error),"
                + " logged AS (INSERT INTO " + t.deliveryLog() + " (consumer_group_id, message_id, attempt, status, error)"
                + "   SELECT ?, x.message_id, x.attempts, x.status, x.error FROM ("
                + "     SELECT message_id, attempts, 'dead' AS status, last_error AS error FROM spent"
                + "     UNION ALL SELECT message_id, attempts, 'expired',"
                + "       'the lease of delivery ' || attempts || ' of ' || ?::int || ' ran out before its handler finished'"
                + "       FROM expired WHERE attempts < ?) x"
                + "   WHERE ?::boolean),"
                // The byte budget, as for ranges: the rows whose payloads fit (the first always); the
                // others stay locked only until commit and are claimed next time.
                + " picked AS (SELECT x.message_id, coalesce(octet_length(l.payload), 0) AS size,"
                + "   sum(coalesce(octet_length(l.payload), 0)) OVER (ORDER BY x.message_id) AS upto"
                + "   FROM (SELECT message_id FROM due UNION SELECT message_id FROM expired WHERE attempts < ?) x"
                + "   LEFT JOIN " + t.messageLog() + " l ON l.id = x.message_id)"
                + " UPDATE " + t.exceptionQueue() + " e SET status = 'inflight', lease_owner = ?,"
                + "   lease_expires_at = now() + make_interval(secs => ?), attempts = e.attempts + 1, updated_at = now()"
                + " WHERE e.consumer_group_id = ? AND e.message_id IN (SELECT message_id FROM picked WHERE upto <= ? OR upto = size)"
                + " RETURNING e.message_id, e.attempts, e.delays, e.deferrals";
    }

    /**
     * Binds {@link #claimRows}'s parameters; {@code logExpiries}: the group's delivery log records failures;
     * {@code maxBytes}: the claim's payload budget (ConsumeOptions.maxBytes).
     */
    static void bindClaimRows(java.sql.PreparedStatement ps, long group, int batch, int maxAttempts, boolean logExpiries,
                              java.util.UUID owner, double leaseSeconds, long maxBytes) throws java.sql.SQLException {
        int i = 1;
        ps.setLong(i++, group);
        ps.setLong(i++, group);
        ps.setInt(i++, batch);
        ps.setLong(i++, group);
        ps.setInt(i++, batch);
        ps.setInt(i++, maxAttempts);
        ps.setLong(i++, group);
        ps.setInt(i++, maxAttempts);
        ps.setLong(i++, group);
        ps.setInt(i++, maxAttempts);
        ps.setInt(i++, maxAttempts);
        ps.setBoolean(i++, logExpiries);
        ps.setInt(i++, maxAttempts);
        ps.setObject(i++, owner);
        ps.setDouble(i++, leaseSeconds);
        ps.setLong(i++, group);
        ps.setLong(i, maxBytes);
    }

    /** Messages of a range (or of a list of ids) with whether compaction superseded them. */
    static String fetch(FamilyTables t, boolean byIds) {
        return "SELECT " + FETCH_COLUMNS
                + " FROM " + t.messageLog() + " m LEFT JOIN " + t.compactionHead() + " h"
                + "   ON m.compaction_rank IS NOT NULL AND h.compaction_key = m.message_key"
                + (byIds ? " WHERE m.id = ANY(?)" : " WHERE m.id BETWEEN ? AND ? AND NOT (m.id = ANY(?))")
                + " ORDER BY m.id";
    }

    static String bindings(FamilyTables t) {
        // The head comes from the same snapshot: the bindings are exact for ids up to it.
        return "SELECT pattern, from_message_id, until_message_id, " + head(t) + " FROM " + t.bindingConfig()
                + " WHERE consumer_group_id = ?";
    }

    /**
     * Completing a range: only the live holder may (stale holders change nothing). Nothing else is written:
     * committed follows from the leases left ({@link #committedNow}), and the next claim stores it.
     */
    static String completeRange(FamilyTables t) {
        return "DELETE FROM " + t.claimLease() + " WHERE id = ? AND owner_token = ? AND expires_at > now() RETURNING low";
    }

    /** Releasing a range on a clean stop: taken over at once, resolved ids kept. */
    static String releaseRange(FamilyTables t) {
        return "UPDATE " + t.claimLease() + " SET expires_at = now(), released = true, resolved = ?"
                + " WHERE id = ? AND owner_token = ? AND expires_at > now()";
    }

    /**
     * Renews ranges with their resolved ids. Parameters: lease seconds, ids, resolved ids (as array texts), the
     * same ids again, owner. The second list of ids is the index condition: a bare join with the unnested list
     * lets the planner scan the whole table, and with it every lease a held xmin keeps.
     */
    static String renewRanges(FamilyTables t) {
        return "UPDATE " + t.claimLease() + " l SET expires_at = now() + make_interval(secs => ?), resolved = r.resolved"
                + " FROM (SELECT * FROM unnest(?::bigint[], ?::text[]) AS x(id, resolved_text)) x,"
                + "   LATERAL (SELECT x.resolved_text::bigint[] AS resolved) r"
                + " WHERE l.id = ANY(?::bigint[]) AND l.id = x.id AND l.owner_token = ? AND l.expires_at > now() RETURNING l.id";
    }

    static String renewRows(FamilyTables t) {
        return "UPDATE " + t.exceptionQueue() + " SET lease_expires_at = now() + make_interval(secs => ?)"
                + " WHERE consumer_group_id = ? AND message_id = ANY(?) AND status = 'inflight' AND lease_owner = ?"
                + " AND lease_expires_at > now() RETURNING message_id";
    }

    static String renewKeys(FamilyTables t) {
        return "UPDATE " + t.messageKeyLease() + " SET expires_at = now() + make_interval(secs => ?)"
                + " WHERE consumer_group_id = ? AND owner_token = ?";
    }

    /** Writes the outcome rows of a range (ready, dead, deferred); rows already present are left alone. */
    static String insertRows(FamilyTables t) {
        return "INSERT INTO " + t.exceptionQueue() + " (consumer_group_id, message_id, status, message_key, concurrency,"
                + " attempts, delays, can_run_after, last_error, error_stack, dead_at)"
                + " SELECT ?, x.id, x.status, x.mkey, ?, x.attempts, x.delays, now() + make_interval(secs => x.after_s),"
                + "   x.err, x.stack, CASE WHEN x.status = 'dead' THEN now() END"
                + " FROM unnest(?::bigint[], ?::text[], ?::text[], ?::int[], ?::int[], ?::float8[], ?::text[], ?::text[])"
                + "   AS x(id, status, mkey, attempts, delays, after_s, err, stack)"
                + " ON CONFLICT (consumer_group_id, message_id) DO NOTHING";
    }

    /** An exception row's outcome, guarded by the row lease. */
    static String updateRow(FamilyTables t) {
        return "UPDATE " + t.exceptionQueue() + " SET status = ?, attempts = ?, delays = ?,"
                + " deferrals = CASE WHEN ? = 'deferred' THEN deferrals + 1 ELSE deferrals END,"
                + " can_run_after = now() + make_interval(secs => ?), last_error = coalesce(?, last_error),"
                + " error_stack = coalesce(?, error_stack), dead_at = CASE WHEN ? = 'dead' THEN now() END,"
                + " lease_owner = NULL, lease_expires_at = NULL, updated_at = now()"
                + " WHERE consumer_group_id = ? AND message_id = ? AND status = 'inflight' AND lease_owner = ?"
                + " AND lease_expires_at > now()";
    }

    static String deleteRow(FamilyTables t) {
        return "DELETE FROM " + t.exceptionQueue() + " WHERE consumer_group_id = ? AND message_id = ? AND status = 'inflight'"
                + " AND lease_owner = ? AND lease_expires_at > now()";
    }

    /**
     * Gives a row back on a clean stop: {@code ready} and due now, the attempt not counted (it never finished).
     * Not an expired lease, which the row claim would count as a spent delivery.
     */
    static String releaseRow(FamilyTables t) {
        return "UPDATE " + t.exceptionQueue() + " SET status = 'ready', can_run_after = now(), lease_owner = NULL,"
                + " lease_expires_at = NULL, attempts = greatest(attempts - 1, 0), updated_at = now()"
                + " WHERE consumer_group_id = ? AND message_id = ? AND status = 'inflight' AND lease_owner = ?"
                + " AND lease_expires_at > now()";
    }

    /** Deletes every key lease of one holder (a clean stop); returns the keys. Parameters: group, owner token. */
    static String releaseAllKeys(FamilyTables t) {
        return "DELETE FROM " + t.messageKeyLease() + " WHERE consumer_group_id = ? AND owner_token = ? RETURNING message_key";
    }

    /** Bounds the rest of the transaction's statements (milliseconds, as text): close's releases use it. */
    static final String STATEMENT_TIMEOUT = "SELECT set_config('statement_timeout', ?, true)";

    static String deliveryLog(FamilyTables t) {
        return "INSERT INTO " + t.deliveryLog() + " (consumer_group_id, message_id, attempt, status, error)"
                + " SELECT ?, x.id, x.attempt, x.status, x.err FROM unnest(?::bigint[], ?::int[], ?::text[], ?::text[])"
                + "   AS x(id, attempt, status, err)";
    }

    /**
     * Takes free (or expired) key leases; returns the keys taken. A key this consumer already holds for
     * another range or row is not taken again: one in-flight delivery per key, also within a process.
     */
    static String acquireKeys(FamilyTables t) {
        return "INSERT INTO " + t.messageKeyLease() + " AS k (consumer_group_id, message_key, message_id, owner_token, expires_at)"
                + " SELECT ?, x.key, x.id, ?, now() + make_interval(secs => ?)"
                + " FROM unnest(?::text[], ?::bigint[]) AS x(key, id) ORDER BY x.key"
                + " ON CONFLICT (consumer_group_id, message_key) DO UPDATE SET message_id = EXCLUDED.message_id,"
                + "   owner_token = EXCLUDED.owner_token, expires_at = EXCLUDED.expires_at"
                + "   WHERE k.expires_at <= now()"
                + " RETURNING message_key";
    }

    static String releaseKeys(FamilyTables t) {
        return "DELETE FROM " + t.messageKeyLease() + " WHERE consumer_group_id = ? AND owner_token = ? AND message_key = ANY(?)";
    }

    /**
     * Wakes, per key, the lowest deferred row waiting on it — the next in line — unless someone holds
     * the key right now (its holder wakes it when letting go). Waking one per key avoids a thundering
     * herd of same-key rows racing for the key. Woken rows re-check their key when claimed.
     */
    static String wakeDeferred(FamilyTables t) {
        return "UPDATE " + t.exceptionQueue() + " e SET status = 'ready', can_run_after = now(), updated_at = now()"
                + " FROM (SELECT DISTINCT ON (d.message_key) d.message_id FROM " + t.exceptionQueue() + " d"
                + "   WHERE d.consumer_group_id = ? AND d.status = 'deferred' AND d.message_key = ANY(?)"
                + "   AND NOT EXISTS (SELECT 1 FROM " + t.messageKeyLease() + " k WHERE k.consumer_group_id = d.consumer_group_id"
                + "     AND k.message_key = d.message_key AND k.expires_at > now())"
                + "   ORDER BY d.message_key, d.message_id) next"
                + " WHERE e.consumer_group_id = ? AND e.message_id = next.message_id AND e.status = 'deferred'";
    }

    /**
     * For exclusive delivery: the keys among (key, first id) pairs that an earlier message should get
     * first — an exception row of the key that is due and waiting (ready or deferred), or an unresolved
     * message of the key in a range whose lease expired (its holder died: the key is free exactly when the
     * range can be taken over, and the takeover must not find the key gone to a later message, which
     * could hold it for as long as its handler runs).
     */
    static String waitingKeys(FamilyTables t) {
        return "SELECT x.key FROM unnest(?::text[], ?::bigint[]) AS x(key, first_id)"
                + " WHERE EXISTS (SELECT 1 FROM " + t.exceptionQueue() + " e WHERE e.consumer_group_id = ? AND e.message_key = x.key"
                + "   AND e.message_id < x.first_id AND e.status IN ('ready', 'deferred') AND e.can_run_after <= now())"
                + "  OR " + unresolvedInRangeBelow(t, "l.expires_at <= now()");
    }

    /**
     * For ordered delivery: the keys among (key, first id) pairs that have an unresolved earlier message
     * in this group — an exception row not yet resolved, or a message inside another open range below.
     */
    static String blockedKeys(FamilyTables t) {
        return "SELECT x.key FROM unnest(?::text[], ?::bigint[]) AS x(key, first_id)"
                + " WHERE EXISTS (SELECT 1 FROM " + t.exceptionQueue() + " e WHERE e.consumer_group_id = ? AND e.message_key = x.key"
                + "     AND e.message_id < x.first_id AND e.status IN ('ready', 'deferred', 'inflight'))"
                + "  OR " + unresolvedInRangeBelow(t, "l.id <> ?");
    }

    /**
     * Whether a message of key {@code x.key} below {@code x.first_id} is unresolved in a leased range that
     * also meets {@code which}. Parameters: group, group, then those of {@code which}.
     */
    private static String unresolvedInRangeBelow(FamilyTables t, String which) {
        return "EXISTS (SELECT 1 FROM " + t.claimLease() + " l JOIN " + t.messageLog() + " m"
                + "     ON m.id BETWEEN l.low AND least(l.high, x.first_id - 1)"
                + "     WHERE l.consumer_group_id = ? AND l.low > " + committedFloor(t) + " AND l.low < x.first_id AND " + which
                + "     AND m.message_key = x.key"
                + "     AND NOT (m.id = ANY(l.resolved)))";
    }
}
