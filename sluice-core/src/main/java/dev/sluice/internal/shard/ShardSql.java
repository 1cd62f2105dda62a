package dev.sluice.internal.shard;

import java.util.concurrent.ConcurrentHashMap;

/**
 * Owner of {@code shard_lease}: every statement that writes it, built once per schema ({@link #of}). A row is one
 * bucket of a partitioned group; {@code owner_token} (NULL: unowned) and {@code lease_expires_at} say who holds it
 * and until when. The fair share of a member is {@code ceil(shard_count / members)}, where members are the live
 * instances of the group's consumer worker ({@code worker_config} name {@code consumer}), capped at the worker's
 * target when it is 0 or more (target 0: fair share 0), and at least 1 — computed in SQL by every claim and
 * renewal, so every process agrees and no one counts on a stale view.
 */
final class ShardSql {
    /** The notification payload that makes every process of the schema run its shard heartbeat now. */
    static final String WAKE_KEY = "shards";

    /** More schemas than this in one process is unusual; the cache then starts over (bounded memory). */
    private static final int MAX_CACHED = 256;
    private static final ConcurrentHashMap<String, ShardSql> CACHE = new ConcurrentHashMap<>();

    /** Creates the group's rows {@code 0..N-1} that are missing. Parameters: group id, count, count. */
    final String declare;
    /** The stored count of a group and whether every row agrees. Parameters: group id. Returns min, max, rows. */
    final String storedCount;
    /** Deletes a group's rows (repartition). Parameters: group id. */
    final String deleteGroup;
    /**
     * Claims ONE unowned bucket, or one whose lease expired at least half a lease ago ({@link #TAKEOVER_GRACE}; the
     * lowest one not locked by another claim) for a member below its fair
     * share; returns one row — the bucket (NULL when none was claimed), the fair share, the members — or none when
     * the group has no rows.
     * Parameters: lease seconds, token, instance id (or a typed NULL), group id.
     */
    final String claimOne;
    /**
     * How long past its expiry a bucket that was not given back stays its owner's: half a lease. A renewal late by
     * less (a database restart, a stall across one heartbeat) keeps the bucket with its owner — whose handlers may
     * still be running — instead of handing it to another member that would run the same keys beside them. A killed
     * member's buckets are taken over after the lease and this grace; released buckets are taken at once.
     */
    static final double TAKEOVER_GRACE = 0.5;
    /**
     * A bucket's renewal is late when its lease ends within this share of a lease: its owner renews every third of
     * a lease, so a live owner's rows end more than two thirds of a lease from now. The heartbeat of the other
     * members then runs again when such a bucket becomes claimable, not up to a heartbeat later.
     */
    static final double LATE_RENEWAL = 0.5;
    /**
     * The shard heartbeat of one process: renews every row owned by one of the (group, token) pairs — expired ones
     * too, as long as the token still owns them — and returns per pair its group, token, the buckets it holds now
     * (int[], ascending), the fair share, the members and the buckets of the group that are claimable (unowned, or
     * expired for at least the takeover grace and owned by none of the pairs), and in how many seconds the first
     * bucket of another member whose renewal is late ({@link #LATE_RENEWAL}) becomes claimable (NULL: none is late).
     * Parameters: lease seconds, group ids (int8[]), tokens (uuid[]) — the two arrays side by side.
     */
    final String renew;
    /**
     * Gives buckets back (only rows the token still owns) and, when one was, notifies the schema's channel with
     * {@link #WAKE_KEY}. Parameters: group id, token, buckets (int4[]), channel. Returns the released count.
     */
    final String release;
    /** Notifies the schema's channel with {@link #WAKE_KEY}. Parameters: channel. */
    static final String NOTIFY = "SELECT pg_notify(?, '" + WAKE_KEY + "')";
    /**
     * The commit guard: locks (FOR SHARE) the rows the token still owns among the buckets whose lease is live or
     * expired by less than the takeover grace (no other member can have taken them: a claim needs the grace to have
     * passed, and skips locked rows), so a takeover waits for the caller's commit. A late renewal therefore does not
     * throw away finished work. Parameters: group id, token, buckets (int4[]), lease seconds.
     */
    final String lockHeld;
    /** A group's buckets for operators (never the token). Parameters: group id. */
    final String list;

    private ShardSql(String q) {
        String lease = q + ".shard_lease";
        String worker = q + ".worker_config";
        String instance = q + ".worker_instance";
        // The fair share of group g.gid among the live instances of its consumer worker (sc: the group's count).
        // w: the group's consumer worker — its target and its live instances capped at the target — looked up per
        // group (a parameterized index lookup, not a scan of the workers); missing: no cap, no instance.
        String fairShare = """
                CASE WHEN w.target_instances = 0 THEN 0
                     ELSE ceil(%1$s::numeric / greatest(1, coalesce(w.live, 0)))::int END""";
        String membersOf = """
                LEFT JOIN LATERAL (
                    SELECT x.target_instances, CASE WHEN x.target_instances >= 0 THEN least(n.n, x.target_instances)
                               ELSE n.n END::int AS live
                    FROM %1$s x CROSS JOIN LATERAL (SELECT count(*) AS n FROM %2$s i
                        WHERE i.worker_config_id = x.id AND i.expires_at > now()) n
                    WHERE x.consumer_group_id = %3$s AND x.name = 'consumer') w ON true""";

        this.declare = "INSERT INTO " + lease + " (consumer_group_id, bucket, shard_count)"
                + " SELECT ?, b, ? FROM generate_series(0, ? - 1) b ON CONFLICT DO NOTHING";
        this.storedCount = "SELECT min(shard_count), max(shard_count), count(*) FROM " + lease + " WHERE consumer_group_id = ?";
        this.deleteGroup = "DELETE FROM " + lease + " WHERE consumer_group_id = ?";
        this.claimOne = """
                WITH arg AS (SELECT ?::float8 AS secs, ?::uuid AS token, ?::int8 AS instance_id, ?::int8 AS gid),
                grp AS (
                    SELECT a.gid, sc.shard_count, %3$s AS fair, coalesce(w.live, 0) AS live
                    FROM arg a
                    CROSS JOIN LATERAL (SELECT l.shard_count FROM %1$s l WHERE l.consumer_group_id = a.gid
                        ORDER BY l.bucket LIMIT 1) sc
                    %4$s),
                mine AS (
                    SELECT count(*)::int AS held FROM %1$s l, arg a
                    WHERE l.consumer_group_id = a.gid AND l.owner_token = a.token AND l.lease_expires_at > now()),
                pick AS (
                    SELECT l.bucket FROM %1$s l, arg a, grp g, mine
                    WHERE l.consumer_group_id = a.gid AND mine.held < g.fair
                      AND (l.lease_expires_at IS NULL OR l.lease_expires_at <= now() - make_interval(secs => a.secs * %5$s))
                    ORDER BY l.bucket LIMIT 1 FOR UPDATE OF l SKIP LOCKED),
                taken AS (
                    UPDATE %1$s l SET owner_token = a.token, owner_instance_id = a.instance_id,
                           lease_expires_at = now() + make_interval(secs => a.secs), heartbeat_at = now(), updated_at = now()
                    FROM arg a, pick p
                    WHERE l.consumer_group_id = a.gid AND l.bucket = p.bucket
                      AND (l.lease_expires_at IS NULL OR l.lease_expires_at <= now() - make_interval(secs => a.secs * %5$s))
                    RETURNING l.bucket)
                SELECT (SELECT bucket FROM taken), g.fair, g.live FROM grp g
                """.formatted(lease, instance, fairShare.formatted("sc.shard_count"),
                membersOf.formatted(worker, instance, "a.gid"), TAKEOVER_GRACE);
        this.renew = """
                WITH pairs AS (
                    SELECT DISTINCT p.gid, p.token FROM unnest(?::int8[], ?::uuid[]) AS p(gid, token)),
                arg AS (SELECT ?::float8 AS secs),
                renewed AS (
                    UPDATE %1$s l SET lease_expires_at = now() + make_interval(secs => a.secs), heartbeat_at = now()
                    FROM pairs p, arg a
                    WHERE l.consumer_group_id = p.gid AND l.owner_token = p.token
                    RETURNING l.consumer_group_id AS gid, l.owner_token AS token, l.bucket),
                grp AS (
                    SELECT g.gid, %3$s AS fair, coalesce(w.live, 0) AS live, c.claimable, c.next_claim
                    FROM (SELECT gid, array_agg(token) AS tokens FROM pairs GROUP BY gid) g
                    CROSS JOIN LATERAL (SELECT l.shard_count FROM %1$s l WHERE l.consumer_group_id = g.gid
                        ORDER BY l.bucket LIMIT 1) sc
                    %4$s
                    CROSS JOIN LATERAL (SELECT
                        (SELECT count(*) FROM %1$s l WHERE l.consumer_group_id = g.gid AND l.lease_expires_at IS NULL)
                      + (SELECT count(*) FROM %1$s l WHERE l.consumer_group_id = g.gid
                            AND l.lease_expires_at <= now() - make_interval(secs => (SELECT secs FROM arg) * %5$s)
                            AND l.owner_token <> ALL (g.tokens)) AS claimable,
                        (SELECT extract(epoch FROM min(l.lease_expires_at) - now())::float8
                                + (SELECT secs FROM arg) * %5$s FROM %1$s l
                         WHERE l.consumer_group_id = g.gid AND l.owner_token <> ALL (g.tokens)
                           AND l.lease_expires_at < now() + make_interval(secs => (SELECT secs FROM arg) * %6$s)
                           AND l.lease_expires_at > now() - make_interval(secs => (SELECT secs FROM arg) * %5$s))
                          AS next_claim) c)
                SELECT p.gid, p.token,
                       coalesce((SELECT array_agg(r.bucket ORDER BY r.bucket) FROM renewed r
                                 WHERE r.gid = p.gid AND r.token = p.token), '{}'::int[]),
                       coalesce(g.fair, 0), coalesce(g.live, 0), coalesce(g.claimable, 0)::int, g.next_claim
                FROM pairs p LEFT JOIN grp g ON g.gid = p.gid
                """.formatted(lease, instance, fairShare.formatted("sc.shard_count"),
                membersOf.formatted(worker, instance, "g.gid"), TAKEOVER_GRACE, LATE_RENEWAL);
        this.release = """
                WITH gone AS (
                    UPDATE %1$s SET owner_token = NULL, owner_instance_id = NULL, lease_expires_at = NULL, updated_at = now()
                    WHERE consumer_group_id = ? AND owner_token = ? AND bucket = ANY (?::int4[])
                    RETURNING bucket),
                n AS (SELECT count(*)::int AS released FROM gone)
                SELECT n.released, (SELECT pg_notify(?, '%2$s')::text WHERE n.released > 0) FROM n
                """.formatted(lease, WAKE_KEY);
        this.lockHeld = "SELECT bucket FROM " + lease + " WHERE consumer_group_id = ? AND owner_token = ?"
                + " AND bucket = ANY (?::int4[]) AND lease_expires_at > now() - make_interval(secs => ?::float8 * "
                + TAKEOVER_GRACE + ") ORDER BY bucket FOR SHARE";
        this.list = """
                SELECT l.bucket, l.shard_count, coalesce(l.owner_instance_id, 0), i.holder, l.lease_expires_at,
                       l.heartbeat_at, l.updated_at
                FROM %1$s l LEFT JOIN %2$s i ON i.id = l.owner_instance_id AND l.owner_token IS NOT NULL
                WHERE l.consumer_group_id = ? ORDER BY l.bucket
                """.formatted(lease, instance);
    }

    /** The statements of the schema {@code quotedSchema}, built on first use and then shared. */
    static ShardSql of(String quotedSchema) {
        ShardSql sql = CACHE.get(quotedSchema);
        if (sql != null) {
            return sql;
        }
        if (CACHE.size() >= MAX_CACHED) {
            CACHE.clear();
        }
        return CACHE.computeIfAbsent(quotedSchema, ShardSql::new);
    }
}
