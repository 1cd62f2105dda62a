package dev.sluice.internal.consume;

import dev.sluice.internal.schema.FamilyTables;

/**
 * Owner of {@code message_key_lease_<id>}: every statement that writes it, and the key checks of the keyed
 * policies, built once per stream ({@link ConsumeSql#of}). A key lease gives one in-flight delivery per message
 * key of a group ({@code ordered}, {@code exclusive}); the {@code parallel} policy takes none.
 */
final class KeyLeaseSql {
    /**
     * Takes free (or expired) key leases; returns the keys taken. A key this consumer already holds for
     * another range or row is not taken again: one in-flight delivery per key, also within a process.
     * Keys the statement's snapshot shows held and unexpired are left out before the insert, so the statement
     * locks no row another holder keeps: {@code ON CONFLICT DO UPDATE} locks the row it meets even when its
     * {@code WHERE} refuses the update, and held that way until this transaction ends (after its key checks and
     * its commit) such a lock made the holder's renewal and release, and other consumers' takes, queue behind it.
     * A key left out because it was released a moment ago is busy for this take, as if the release came later.
     * Parameters: group, owner, lease seconds, keys, first ids, group.
     */
    final String acquireKeys;

    /** Releases some keys of one holder. Parameters: group, owner, keys. */
    final String releaseKeys;

    /** Deletes every key lease of one holder (a clean stop); returns the keys. Parameters: group, owner token. */
    final String releaseAllKeys;

    /** Renews every key lease of one holder, locking them in key order. Parameters: group, owner, lease seconds. */
    final String renewKeys;

    /** Drops every key lease of a group (a rewind). Parameter: group. */
    final String deleteKeys;

    /**
     * For exclusive delivery: the keys among (key, first id) pairs that an earlier message should get
     * first — an exception row of the key that is due and waiting (ready or deferred), or an unresolved
     * message of the key in a range whose lease expired (its holder died: the key is free exactly when the
     * range can be taken over, and the takeover must not find the key gone to a later message, which
     * could hold it for as long as its handler runs).
     */
    final String waitingKeys;

    /**
     * The lowest {@code low} of the open ranges {@link #waitingKeys} may look into (null: none). Parameters: group,
     * group, highest first id.
     */
    final String waitingFloor;

    /**
     * For ordered delivery: the keys among (key, first id) pairs that have an unresolved earlier message
     * in this group — an exception row not yet resolved, or a message inside another open range below.
     */
    final String blockedKeys;

    /**
     * The lowest {@code low} of the other open ranges {@link #blockedKeys} looks into (null: none). Parameters: group,
     * group, highest first id, own range lease (-1: none).
     */
    final String blockedFloor;

    KeyLeaseSql(FamilyTables t, RangeSql ranges) {
        this.acquireKeys = "INSERT INTO " + t.messageKeyLease() + " AS k (consumer_group_id, message_key, message_id, owner_token, expires_at)"
                + " SELECT ?, x.key, x.id, ?, now() + make_interval(secs => ?)"
                + " FROM unnest(?::text[], ?::bigint[]) AS x(key, id)"
                + " WHERE NOT EXISTS (SELECT 1 FROM " + t.messageKeyLease() + " h WHERE h.consumer_group_id = ?"
                + "   AND h.message_key = x.key AND h.expires_at > now())"
                + " ORDER BY x.key"
                + " ON CONFLICT (consumer_group_id, message_key) DO UPDATE SET message_id = EXCLUDED.message_id,"
                + "   owner_token = EXCLUDED.owner_token, expires_at = EXCLUDED.expires_at"
                + "   WHERE k.expires_at <= now()"
                + " RETURNING message_key";
        // Every statement that locks several key leases locks them in key order, as acquireKeys does (its INSERT runs
        // ORDER BY key, and ON CONFLICT locks the row it meets): two consumers renewing, releasing and acquiring
        // overlapping keys at once then queue instead of deadlocking (the e2e benchmark's ordered group with 10,000
        // keys and two clients hit 40P01 in the renewal, which then ran a whole lease late).
        String mkl = t.messageKeyLease();
        String inOrder = "SELECT consumer_group_id, message_key FROM " + mkl
                + " WHERE consumer_group_id = ? AND owner_token = ?%s ORDER BY message_key FOR UPDATE";
        String same = " k.consumer_group_id = mine.consumer_group_id AND k.message_key = mine.message_key";
        this.releaseKeys = "WITH mine AS (" + inOrder.formatted(" AND message_key = ANY(?)") + ") DELETE FROM " + mkl
                + " k USING mine WHERE" + same;
        this.releaseAllKeys = "WITH mine AS (" + inOrder.formatted("") + ") DELETE FROM " + mkl
                + " k USING mine WHERE" + same + " RETURNING k.message_key";
        this.renewKeys = "WITH mine AS (" + inOrder.formatted("") + ") UPDATE " + mkl
                + " k SET expires_at = now() + make_interval(secs => ?) FROM mine WHERE" + same;
        this.deleteKeys = "DELETE FROM " + t.messageKeyLease() + " WHERE consumer_group_id = ?";
        this.waitingKeys = keyCheck(t, ranges, "l.expires_at <= now()", "e.status IN ('ready', 'deferred') AND e.can_run_after <= now()");
        // Any open range, expired or not: one may expire between the two statements.
        this.waitingFloor = rangeFloor(t, ranges, "TRUE");
        this.blockedKeys = keyCheck(t, ranges, "l.id <> ?", "e.status IN ('ready', 'deferred', 'inflight')");
        this.blockedFloor = rangeFloor(t, ranges, "l.id <> ?");
    }

    /**
     * The keys among (key, first id) pairs with an earlier message that holds them back: an exception row of the key
     * below its first id in {@code rowStates}, or an unresolved message of the key below its first id in a leased range
     * that meets {@code which}. The ranges' messages are read once for all keys ({@code r}), inside ids
     * {@code [floor, highest first id)} bound as constants — the floor is {@link #rangeFloor}'s answer, read just
     * before — so the planner reads only the log partitions those ranges span. (Bounded above only, the check read
     * every partition below, once per key and range: 5 s per check at 35 partitions in an hour-long lab run, and the
     * {@code ordered} group, which runs it for every range, fell further behind the more partitions its lag kept.)
     * Parameters: group, group, those of {@code which}, floor, highest first id, keys, keys, first ids, group.
     */
    private static String keyCheck(FamilyTables t, RangeSql ranges, String which, String rowStates) {
        return "WITH r AS MATERIALIZED (SELECT m.message_key AS key, min(m.id) AS first FROM " + t.claimLease() + " l"
                + "   JOIN " + t.messageLog() + " m ON m.id BETWEEN l.low AND l.high"
                + "   WHERE l.consumer_group_id = ? AND l.low > " + ranges.committedFloor + " AND " + which
                + "   AND m.id >= ? AND m.id < ? AND m.message_key = ANY(?::text[]) AND NOT (m.id = ANY(l.resolved))"
                + "   GROUP BY m.message_key)"
                + " SELECT x.key FROM unnest(?::text[], ?::bigint[]) AS x(key, first_id)"
                + " WHERE EXISTS (SELECT 1 FROM " + t.exceptionQueue() + " e WHERE e.consumer_group_id = ? AND e.message_key = x.key"
                + "     AND e.message_id < x.first_id AND " + rowStates + ")"
                + "  OR EXISTS (SELECT 1 FROM r WHERE r.key = x.key AND r.first < x.first_id)";
    }

    /**
     * The lowest first id of the leased ranges meeting {@code which} that could hold a message below the highest first
     * id (null: none). New ranges are claimed above every existing one, so none can appear below it before the check
     * that follows. Parameters: group, group, highest first id, those of {@code which}.
     */
    private static String rangeFloor(FamilyTables t, RangeSql ranges, String which) {
        return "SELECT min(l.low) FROM " + t.claimLease() + " l WHERE l.consumer_group_id = ? AND l.low > "
                + ranges.committedFloor + " AND l.low < ? AND " + which;
    }
}
