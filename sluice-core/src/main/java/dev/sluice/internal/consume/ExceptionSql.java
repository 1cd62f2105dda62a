package dev.sluice.internal.consume;

import dev.sluice.ConcurrencyPolicy;
import dev.sluice.internal.schema.FamilyTables;
import java.util.EnumMap;
import java.util.Map;

/**
 * Owner of {@code exception_queue_<id>} and {@code delivery_log_<id>}: every statement that writes either table,
 * built once per stream ({@link ConsumeSql#of}). One owner holds the pair because the row claim logs expired
 * deliveries in the same statement that claims the rows (docs/consume.md, "exception queue"). Rows carry their
 * own lease ({@code lease_owner}, {@code lease_expires_at}); every outcome is guarded by it and by the claim's
 * {@code attempts} (each claim counts one), so a stale holder changes nothing — the same consumer's earlier claim of a
 * row it took again after that claim's lease ran out (same owner token) included.
 */
final class ExceptionSql {
    /** The row claims, one per key policy ({@link #claimRows(ConcurrencyPolicy)}). */
    private final Map<ConcurrencyPolicy, String> claimRows = new EnumMap<>(ConcurrencyPolicy.class);

    /**
     * The row claim of a partitioned group's member: {@code ordered}'s, taking only rows of the buckets it owns
     * ({@link PartitionSql#bucketOf}). Parameters ({@link #bindClaimPartitionRows}): bucket count, buckets (int[]),
     * then those of {@link #claimRows}.
     */
    final String claimPartitionRows;

    /**
     * Turns a poison range's unresolved messages into individual ready rows and drops the range: the one
     * statement here that also deletes a range lease ({@code claim_lease_<id>}, otherwise {@link RangeSql}'s),
     * so the range becomes rows atomically. Parameters: lease id, group, concurrency, the range's low and high
     * (constants, so the planner reads only the log partitions of the range).
     */
    final String quarantine;

    /**
     * Writes the outcome rows of a range (ready, dead, deferred); rows already present are left alone. Each row takes
     * its message's payload size (the row claim's byte budget). Parameters: group, concurrency, the eight arrays, then
     * the lowest and highest id (constants, so the planner reads only the log partitions of the rows).
     */
    final String insertRows;

    /**
     * An exception row's outcome, guarded by the row lease and the claim's attempts. Parameters: status, attempts,
     * delays, status, seconds until due, error, stack, status, group, id, owner, the claim's attempts.
     */
    final String updateRow;

    /** Deletes a row that succeeded (or was skipped), guarded by the row lease. Parameters: group, id, owner, the claim's attempts. */
    final String deleteRow;

    /**
     * Gives a row back on a clean stop: {@code ready} and due now. The claim's attempt stays counted when the row's
     * handler was started (it outlived the shutdown: its next delivery is a redelivery), and is given back when it was
     * not; a started delivery that was the row's last goes {@code dead} instead ({@code stopped: delivery N of M was
     * still running when its consumer stopped}, logged unless the delivery log is off), as an expired one does.
     * Parameters: started, max attempts, logged, group, id, owner, the claim's attempts.
     */
    final String releaseRow;

    /** Renews the leases of rows in flight. Parameters: lease seconds, group, ids, owner. */
    final String renewRows;

    /** Appends delivery events. Parameters: group, ids, attempts, statuses, errors. */
    final String deliveryLog;

    /**
     * Wakes, per key, the lowest deferred row waiting on it — the next in line — unless someone holds
     * the key right now (its holder wakes it when letting go). Waking one per key avoids a thundering
     * herd of same-key rows racing for the key. Woken rows re-check their key when claimed.
     */
    final String wakeDeferred;

    /**
     * A key's lowest unresolved row, locked (waiting, never skipping: skipping it would run a later row first), and
     * whether it may run now (deferred on the key, or ready and due). Parameters: group, key.
     */
    final String nextRowOfKey;

    /** Takes a row for this consumer, counting the attempt (as the claim does). Parameters: owner, lease seconds, group, id. */
    final String takeRow;

    /** Drops the group's non-dead rows above a position (a rewind). Parameters: group, position. */
    final String deleteRowsAbove;

    /** A page of dead letters in message-id order (read-only). Parameters: group, after id, limit. */
    final String deadLetters;

    /** Puts every dead letter of a group back to {@code ready}, attempts and delays reset. Parameter: group. */
    final String redriveAll;

    /** As {@link #redriveAll}, for the given ids only. Parameters: group, ids. */
    final String redriveIds;

    /** Deletes every dead letter of a group (the messages stay in the log). Parameter: group. */
    final String purgeAll;

    /** As {@link #purgeAll}, for the given ids only. Parameters: group, ids. */
    final String purgeIds;

    /**
     * The janitor's sweep of old dead letters: up to a batch of the group's dead rows that went dead more than the
     * group's dead-letter retention ago, picked in message-id order by {@code exception_queue_<id>_dead_idx} with
     * {@code FOR UPDATE SKIP LOCKED} (an operator's redrive or purge may hold them), the condition re-checked in the
     * DELETE (a row redriven meanwhile is no longer dead and stays). Parameters: group, group, retention seconds,
     * limit, retention seconds.
     */
    final String deleteOldDeadLetters;

    /** When the group's oldest dead letter went dead (null when it has none). Parameter: group. */
    final String oldestDeadLetter;

    /**
     * The janitor's sweep of the delivery log: up to a batch of events older than the stream's delivery-log
     * retention, oldest first ({@code delivery_log_<id>_attempted_at_idx}). The log is append-only; SKIP LOCKED only
     * keeps two sweeps from queueing on each other. Parameters: retention seconds, limit.
     */
    final String deleteOldDeliveryLog;

    /** The time of the oldest delivery event (null when there is none). */
    final String oldestDeliveryLog;

    /**
     * Whether any group of the stream has an exception row (ready, deferred, inflight or dead) for a message in
     * {@code [low, high)}: such a row keeps its message's log partition from retention. One primary-key range probe
     * per group. Parameters: stream id, low, high.
     */
    final String rowsInRange;

    ExceptionSql(FamilyTables t) {
        for (ConcurrencyPolicy p : ConcurrencyPolicy.values()) {
            claimRows.put(p, buildClaimRows(t, p, false));
        }
        this.claimPartitionRows = buildClaimRows(t, ConcurrencyPolicy.ORDERED, true);
        this.quarantine = "WITH l AS (DELETE FROM " + t.claimLease() + " WHERE id = ? RETURNING low, high, resolved, reclaims)"
                + " INSERT INTO " + t.exceptionQueue() + " (consumer_group_id, message_id, status, message_key, concurrency,"
                + "   attempts, can_run_after, last_error, payload_bytes)"
                + " SELECT ?, m.id, 'ready', m.message_key, ?, l.reclaims, now(),"
                + "   'quarantined: its range was reclaimed ' || l.reclaims || ' times', octet_length(m.payload)"
                + " FROM l JOIN " + t.messageLog() + " m ON m.id BETWEEN l.low AND l.high"
                + " WHERE m.id BETWEEN ? AND ? AND NOT (m.id = ANY(l.resolved))"
                + " ON CONFLICT (consumer_group_id, message_id) DO NOTHING";
        this.insertRows = "INSERT INTO " + t.exceptionQueue() + " (consumer_group_id, message_id, status, message_key, concurrency,"
                + " attempts, delays, can_run_after, last_error, error_stack, dead_at, payload_bytes)"
                + " SELECT ?, x.id, x.status, x.mkey, ?, x.attempts, x.delays, now() + make_interval(secs => x.after_s),"
                + "   x.err, x.stack, CASE WHEN x.status = 'dead' THEN now() END, coalesce(octet_length(m.payload), 0)"
                + " FROM unnest(?::bigint[], ?::text[], ?::text[], ?::int[], ?::int[], ?::float8[], ?::text[], ?::text[])"
                + "   AS x(id, status, mkey, attempts, delays, after_s, err, stack)"
                + " LEFT JOIN " + t.messageLog() + " m ON m.id = x.id AND m.id BETWEEN ? AND ?"
                + " ON CONFLICT (consumer_group_id, message_id) DO NOTHING";
        this.updateRow = "UPDATE " + t.exceptionQueue() + " SET status = ?, attempts = ?, delays = ?,"
                + " deferrals = CASE WHEN ? = 'deferred' THEN deferrals + 1 ELSE deferrals END,"
                + " can_run_after = now() + make_interval(secs => ?), last_error = coalesce(?, last_error),"
                + " error_stack = coalesce(?, error_stack), dead_at = CASE WHEN ? = 'dead' THEN now() END,"
                + " lease_owner = NULL, lease_expires_at = NULL, updated_at = now()"
                + " WHERE consumer_group_id = ? AND message_id = ? AND status = 'inflight' AND lease_owner = ?"
                + " AND attempts = ? AND lease_expires_at > now()";
        this.deleteRow = "DELETE FROM " + t.exceptionQueue() + " WHERE consumer_group_id = ? AND message_id = ? AND status = 'inflight'"
                + " AND lease_owner = ? AND attempts = ? AND lease_expires_at > now()";
        String spent = "(a.started AND e.attempts >= a.max)";
        this.releaseRow = "WITH a AS (SELECT ?::boolean AS started, ?::int AS max, ?::boolean AS logged),"
                + " r AS (UPDATE " + t.exceptionQueue() + " e SET status = CASE WHEN " + spent + " THEN 'dead' ELSE 'ready' END,"
                + "   dead_at = CASE WHEN " + spent + " THEN now() END,"
                + "   last_error = CASE WHEN " + spent + " THEN 'stopped: delivery ' || e.attempts || ' of ' || a.max"
                + "     || ' was still running when its consumer stopped' ELSE e.last_error END,"
                + "   error_stack = CASE WHEN " + spent + " THEN NULL ELSE e.error_stack END,"
                + "   can_run_after = now(), lease_owner = NULL, lease_expires_at = NULL,"
                + "   attempts = CASE WHEN a.started THEN e.attempts ELSE greatest(e.attempts - 1, 0) END, updated_at = now()"
                + "   FROM a WHERE e.consumer_group_id = ? AND e.message_id = ? AND e.status = 'inflight' AND e.lease_owner = ?"
                + "   AND e.attempts = ? AND e.lease_expires_at > now() RETURNING e.consumer_group_id, e.message_id, e.attempts, e.status, e.last_error)"
                + " INSERT INTO " + t.deliveryLog() + " (consumer_group_id, message_id, attempt, status, error)"
                + " SELECT r.consumer_group_id, r.message_id, r.attempts, 'dead', r.last_error FROM r, a WHERE r.status = 'dead' AND a.logged";
        this.renewRows = "UPDATE " + t.exceptionQueue() + " SET lease_expires_at = now() + make_interval(secs => ?)"
                + " WHERE consumer_group_id = ? AND message_id = ANY(?) AND status = 'inflight' AND lease_owner = ?"
                + " AND lease_expires_at > now() RETURNING message_id";
        this.deliveryLog = "INSERT INTO " + t.deliveryLog() + " (consumer_group_id, message_id, attempt, status, error)"
                + " SELECT ?, x.id, x.attempt, x.status, x.err FROM unnest(?::bigint[], ?::int[], ?::text[], ?::text[])"
                + "   AS x(id, attempt, status, err)";
        this.wakeDeferred = "UPDATE " + t.exceptionQueue() + " e SET status = 'ready', can_run_after = now(), updated_at = now()"
                + " FROM (SELECT DISTINCT ON (d.message_key) d.message_id FROM " + t.exceptionQueue() + " d"
                + "   WHERE d.consumer_group_id = ? AND d.status = 'deferred' AND d.message_key = ANY(?)"
                + "   AND NOT EXISTS (SELECT 1 FROM " + t.messageKeyLease() + " k WHERE k.consumer_group_id = d.consumer_group_id"
                + "     AND k.message_key = d.message_key AND k.expires_at > now())"
                + "   ORDER BY d.message_key, d.message_id) next"
                + " WHERE e.consumer_group_id = ? AND e.message_id = next.message_id AND e.status = 'deferred'";
        this.nextRowOfKey = "SELECT message_id, status = 'deferred' OR (status = 'ready' AND can_run_after <= now())"
                + " FROM " + t.exceptionQueue() + " WHERE consumer_group_id = ? AND message_key = ?"
                + " AND status IN ('ready', 'deferred', 'inflight') ORDER BY message_id LIMIT 1 FOR UPDATE";
        this.takeRow = "UPDATE " + t.exceptionQueue() + " SET status = 'inflight', lease_owner = ?,"
                + " lease_expires_at = now() + make_interval(secs => ?), attempts = attempts + 1, updated_at = now()"
                + " WHERE consumer_group_id = ? AND message_id = ? RETURNING message_id, attempts, delays, deferrals";
        this.deleteRowsAbove = "DELETE FROM " + t.exceptionQueue()
                + " WHERE consumer_group_id = ? AND message_id > ? AND status <> 'dead'";
        this.deadLetters = "SELECT message_id, message_key, attempts, delays, last_error,"
                + " error_stack, created_at, dead_at FROM " + t.exceptionQueue()
                + " WHERE consumer_group_id = ? AND status = 'dead' AND message_id > ? ORDER BY message_id LIMIT ?";
        String redrive = "UPDATE " + t.exceptionQueue() + " SET status = 'ready', attempts = 0, delays = 0,"
                + " can_run_after = now(), dead_at = NULL, lease_owner = NULL, lease_expires_at = NULL, updated_at = now()"
                + " WHERE consumer_group_id = ? AND status = 'dead'";
        this.redriveAll = redrive;
        this.redriveIds = redrive + " AND message_id = ANY(?)";
        String purge = "DELETE FROM " + t.exceptionQueue() + " WHERE consumer_group_id = ? AND status = 'dead'";
        this.purgeAll = purge;
        this.purgeIds = purge + " AND message_id = ANY(?)";
        String deadOld = "status = 'dead' AND dead_at < now() - make_interval(secs => ?)";
        this.deleteOldDeadLetters = "DELETE FROM " + t.exceptionQueue() + " WHERE consumer_group_id = ? AND message_id IN ("
                + "SELECT message_id FROM " + t.exceptionQueue() + " WHERE consumer_group_id = ? AND " + deadOld
                + " ORDER BY message_id LIMIT ? FOR UPDATE SKIP LOCKED) AND " + deadOld;
        this.oldestDeadLetter = "SELECT min(dead_at) FROM " + t.exceptionQueue() + " WHERE consumer_group_id = ? AND status = 'dead'";
        this.deleteOldDeliveryLog = "DELETE FROM " + t.deliveryLog() + " WHERE id IN (SELECT id FROM " + t.deliveryLog()
                + " WHERE attempted_at < now() - make_interval(secs => ?) ORDER BY attempted_at LIMIT ? FOR UPDATE SKIP LOCKED)";
        this.oldestDeliveryLog = "SELECT min(attempted_at) FROM " + t.deliveryLog();
        this.rowsInRange = "SELECT EXISTS (SELECT 1 FROM " + t.quotedSchema() + ".consumer_group_config g WHERE g.stream_id = ?"
                + " AND EXISTS (SELECT 1 FROM " + t.exceptionQueue() + " e WHERE e.consumer_group_id = g.id"
                + "   AND e.message_id >= ? AND e.message_id < ? AND e.status IN ('ready', 'deferred', 'inflight', 'dead')))";
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
     * Parameters ({@link #bindClaimRows}): group, group, batch (due); group, batch (expired); maxAttempts, group,
     * maxAttempts (spent); group, maxAttempts, maxAttempts, log (logged); owner, lease seconds, group, maxAttempts
     * (claim).
     */
    String claimRows(ConcurrencyPolicy policy) {
        return claimRows.get(policy);
    }

    private static String buildClaimRows(FamilyTables t, ConcurrencyPolicy policy, boolean partitioned) {
        String owned = partitioned ? " AND " + PartitionSql.bucketOf("message_key", "message_id", "(SELECT n FROM prm)")
                + " = ANY((SELECT buckets FROM prm)::int[])" : "";
        String candidates = switch (policy) {
            case PARALLEL -> "SELECT message_id FROM " + t.exceptionQueue()
                    + "   WHERE consumer_group_id = ? AND status IN ('ready', 'deferred') AND can_run_after <= now()";
            // A condition on the due row d, not a candidate list: the claim walks the due index in order and probes each
            // row's key for an earlier unresolved row, stopping at the batch (a list would be built over every row first).
            case ORDERED -> null;
            case EXCLUSIVE -> "SELECT h.message_id FROM (SELECT DISTINCT ON (message_key, CASE WHEN message_key IS NULL THEN message_id END)"
                    + "     e.message_id FROM " + t.exceptionQueue() + " e"
                    + "     WHERE e.consumer_group_id = ? AND e.status IN ('ready', 'deferred') AND e.can_run_after <= now()"
                    + "     AND (e.message_key IS NULL OR NOT EXISTS (SELECT 1 FROM " + t.exceptionQueue() + " i"
                    + "       WHERE i.consumer_group_id = e.consumer_group_id AND i.message_key = e.message_key"
                    + "       AND i.status = 'inflight' AND i.lease_expires_at > now()))"
                    + "     ORDER BY message_key, CASE WHEN message_key IS NULL THEN message_id END, message_id) h";
        };
        String runnable = candidates != null ? " AND d.message_id IN (" + candidates + ")"
                : " AND (d.message_key IS NULL OR NOT EXISTS (SELECT 1 FROM " + t.exceptionQueue() + " i"
                + "     WHERE i.consumer_group_id = ? AND i.message_key = d.message_key AND i.message_id < d.message_id"
                + "     AND i.status IN ('ready', 'deferred', 'inflight')))";
        return "WITH " + (partitioned ? "prm AS (SELECT ?::int AS n, ?::int[] AS buckets)," : "")
                + " due AS (SELECT d.message_id, d.payload_bytes FROM " + t.exceptionQueue() + " d"
                + "   WHERE d.consumer_group_id = ?" + runnable
                + "   AND status IN ('ready', 'deferred') AND can_run_after <= now()" + owned
                + "   ORDER BY can_run_after, message_id LIMIT ? FOR UPDATE SKIP LOCKED),"
                + " expired AS MATERIALIZED (SELECT message_id, attempts, payload_bytes FROM " + t.exceptionQueue()
                + "   WHERE consumer_group_id = ? AND status = 'inflight' AND lease_expires_at <= now()" + owned
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
                // The byte budget, as for ranges: the rows whose payloads fit (the first always); the others stay
                // locked only until commit and are claimed next time. Sizes come from the rows, not from a join with
                // the log by id, which would plan and lock every log partition.
                + " picked AS (SELECT x.message_id, x.size, sum(x.size) OVER (ORDER BY x.message_id) AS upto"
                + "   FROM (SELECT message_id, payload_bytes AS size FROM due"
                + "     UNION ALL SELECT message_id, payload_bytes FROM expired WHERE attempts < ?) x)"
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
        bindClaimRows(ps, 1, group, batch, maxAttempts, logExpiries, owner, leaseSeconds, maxBytes);
    }

    /** Binds {@link #claimPartitionRows}'s parameters: the member's buckets, then as {@link #bindClaimRows}. */
    static void bindClaimPartitionRows(java.sql.PreparedStatement ps, int n, java.sql.Array buckets, long group, int batch,
                                       int maxAttempts, boolean logExpiries, java.util.UUID owner, double leaseSeconds,
                                       long maxBytes) throws java.sql.SQLException {
        ps.setInt(1, n);
        ps.setArray(2, buckets);
        bindClaimRows(ps, 3, group, batch, maxAttempts, logExpiries, owner, leaseSeconds, maxBytes);
    }

    private static void bindClaimRows(java.sql.PreparedStatement ps, int first, long group, int batch, int maxAttempts,
                                      boolean logExpiries, java.util.UUID owner, double leaseSeconds, long maxBytes)
            throws java.sql.SQLException {
        int i = first;
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
}
