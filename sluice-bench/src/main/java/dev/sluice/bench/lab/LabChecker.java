package dev.sluice.bench.lab;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The stream's checker, in SQL over the ledger and Sluice's tables, so it keeps up with millions of messages.
 *
 * <p>It first builds the run's message catalogue ({@code sluice_lab.msgs}): every message in the log, every message
 * the ledger says committed and every message a handler ran — with retention on, the janitor drops old log partitions
 * during the run, and their messages are still checked, with the attributes their producer recorded. Then it puts
 * every message into exactly one bucket per group — delivered, dead (a dead letter, or a terminal handler call: dead
 * letters are swept 20 s after they went dead), compacted (the highest
 * {@code (schema_version, rank, id)} of its key wins), other_version, filtered — and counts what must be zero: lost
 * (in no bucket, or known committed but missing from a log partition that still exists), unexpected (a message no
 * producer attempted, a call or result that disagrees with the log about a message, a duplicate that does not point at
 * its original), unbucketed, and order violations of the ordered and partitioned groups. Key overlaps and
 * redeliveries are {@link LabTimeline}'s. Duplicate deliveries are reported, not failed (at-least-once).
 */
public final class LabChecker {

    /**
     * What the checker found.
     *
     * @param produced               messages checked (the catalogue)
     * @param orderViolations        the sum of {@code orderViolationsByGroup}
     * @param orderViolationsByGroup per group whose keys are ordered ({@link LabGroups#KEY_ORDERED}), the order violations
     * @param keyOverlaps            partitioned group: handler calls that started while a call of the same key was running in
     *                               another process (must be 0)
     * @param keyOverlapExample      the first such pair, for the report (null when none)
     * @param retentionDropped       checked messages whose log partition the janitor dropped during the run
     * @param uncountedRedeliveries  handler calls of a message in a group that came after an earlier call of it with the same
     *                               or a higher attempt: a redelivery the engine did not count (must be 0)
     * @param uncountedExample       the first such pair, for the report (null when none)
     */
    public record Check(long produced, long lost, long unexpected, long unbucketed, long duplicates, long orderViolations,
                        Map<String, Map<String, Long>> buckets, long committedMissing, Map<String, Long> orderViolationsByGroup,
                        long keyOverlaps, String keyOverlapExample, long retentionDropped, long uncountedRedeliveries,
                        String uncountedExample) {

        /** A check without uncounted redeliveries. */
        public Check(long produced, long lost, long unexpected, long unbucketed, long duplicates, long orderViolations,
                     Map<String, Map<String, Long>> buckets, long committedMissing, Map<String, Long> orderViolationsByGroup,
                     long keyOverlaps, String keyOverlapExample, long retentionDropped) {
            this(produced, lost, unexpected, unbucketed, duplicates, orderViolations, buckets, committedMissing,
                    orderViolationsByGroup, keyOverlaps, keyOverlapExample, retentionDropped, 0, null);
        }

        /** A check without the per-group figures (tests of the verdict rules). */
        public Check(long produced, long lost, long unexpected, long unbucketed, long duplicates, long orderViolations,
                     Map<String, Map<String, Long>> buckets, long committedMissing) {
            this(produced, lost, unexpected, unbucketed, duplicates, orderViolations, buckets, committedMissing, Map.of(), 0,
                    null, 0);
        }

        /** A check without dropped partitions. */
        public Check(long produced, long lost, long unexpected, long unbucketed, long duplicates, long orderViolations,
                     Map<String, Map<String, Long>> buckets, long committedMissing, Map<String, Long> orderViolationsByGroup,
                     long keyOverlaps, String keyOverlapExample) {
            this(produced, lost, unexpected, unbucketed, duplicates, orderViolations, buckets, committedMissing,
                    orderViolationsByGroup, keyOverlaps, keyOverlapExample, 0);
        }
    }

    /** The catalogue: {@code %1$s} the log, {@code %2$s} the log's name for pg_inherits, {@code %3$d} its partition size. */
    private static final String CATALOGUE = """
        DROP TABLE IF EXISTS sluice_lab.kept;
        CREATE UNLOGGED TABLE sluice_lab.kept AS
            SELECT substring(c.relname from '_([0-9]+)$')::bigint AS k FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
            WHERE i.inhparent = '%2$s'::regclass AND NOT i.inhdetachpending;
        DROP TABLE IF EXISTS sluice_lab.msgs;
        CREATE UNLOGGED TABLE sluice_lab.msgs AS
            WITH logged AS (SELECT id, convert_from(payload, 'UTF8')::jsonb->>'tag' AS tag, message_key, routing_key,
                                   schema_version, compaction_rank FROM %1$s),
            known AS (SELECT DISTINCT ON (id) id, tag FROM (
                          SELECT message_id AS id, tag FROM sluice_lab.results WHERE status = 'committed'
                          UNION ALL SELECT message_id, tag FROM sluice_lab.calls) x ORDER BY id, tag)
            SELECT coalesce(l.id, k.id) AS id, coalesce(l.tag, k.tag) AS tag, l.id IS NOT NULL AS in_log,
                   k.tag AS known_tag, a.tag IS NOT NULL AS attempted,
                   CASE WHEN l.id IS NOT NULL THEN l.message_key ELSE a.message_key END AS message_key,
                   CASE WHEN l.id IS NOT NULL THEN l.routing_key ELSE a.routing_key END AS routing_key,
                   CASE WHEN l.id IS NOT NULL THEN l.schema_version ELSE a.schema_version END AS schema_version,
                   CASE WHEN l.id IS NOT NULL THEN l.compaction_rank ELSE a.compaction_rank END AS compaction_rank,
                   coalesce(l.id, k.id) / %3$d IN (SELECT k FROM sluice_lab.kept) AS partition_kept
            FROM logged l FULL JOIN known k ON k.id = l.id
            LEFT JOIN sluice_lab.attempts a ON a.tag = coalesce(l.tag, k.tag);
        ALTER TABLE sluice_lab.msgs ADD COLUMN superseded boolean NOT NULL DEFAULT false;
        UPDATE sluice_lab.msgs m SET superseded = true FROM (
            SELECT id, ARRAY[schema_version, compaction_rank, id] < max(ARRAY[schema_version, compaction_rank, id])
                       OVER (PARTITION BY message_key) AS loser
            FROM sluice_lab.msgs WHERE compaction_rank IS NOT NULL) w WHERE w.id = m.id AND w.loser;
        CREATE INDEX ON sluice_lab.msgs (id);
        CREATE INDEX ON sluice_lab.msgs (message_key);
        ANALYZE sluice_lab.msgs;
        """;

    /** One group's buckets: {@code %1$s} the exception queue, {@code %2$s} the group table. */
    private static final String BUCKETS = """
        WITH g AS (SELECT id FROM %2$s WHERE name = ?),
        succ AS (SELECT DISTINCT message_id FROM sluice_lab.calls WHERE group_name = ? AND outcome = 'success'),
        dead AS (SELECT e.message_id FROM %1$s e, g WHERE e.consumer_group_id = g.id AND e.status = 'dead'
                 UNION SELECT message_id FROM sluice_lab.calls WHERE group_name = ? AND outcome = 'terminal')
        SELECT CASE
            WHEN s.message_id IS NOT NULL THEN 'delivered'
            WHEN d.message_id IS NOT NULL THEN 'dead'
            WHEN m.superseded THEN 'compacted'
            WHEN m.schema_version <> 1 THEN 'other_version'
            WHEN ?::text IS NOT NULL AND NOT coalesce(m.routing_key ~ ?::text, false) THEN 'filtered'
            ELSE 'unbucketed' END AS bucket, count(*)
        FROM sluice_lab.msgs m LEFT JOIN succ s ON s.message_id = m.id LEFT JOIN dead d ON d.message_id = m.id
        GROUP BY 1 ORDER BY 1""";

    /** Messages that are wrong whatever happens later. */
    private static final String UNEXPECTED = """
        SELECT (SELECT count(*) FROM sluice_lab.msgs WHERE NOT attempted)
             + (SELECT count(*) FROM sluice_lab.msgs WHERE in_log AND known_tag IS DISTINCT FROM tag AND known_tag IS NOT NULL)
             + (SELECT count(*) FROM sluice_lab.calls c JOIN sluice_lab.msgs m ON m.id = c.message_id
                WHERE c.tag IS DISTINCT FROM m.tag)
             + (SELECT count(*) FROM sluice_lab.results r JOIN sluice_lab.msgs m ON m.id = r.message_id
                WHERE r.status = 'committed' AND r.tag <> m.tag)
             + (SELECT count(*) FROM sluice_lab.results d JOIN sluice_lab.attempts da ON da.tag = d.tag
                WHERE d.status = 'duplicate' AND NOT EXISTS (
                    SELECT 1 FROM sluice_lab.msgs m JOIN sluice_lab.attempts oa ON oa.tag = m.tag
                    WHERE m.id = d.message_id AND oa.idempotency_key = da.idempotency_key AND oa.tag <> d.tag))""";

    /** A keyed group's messages whose first success ended before the first success of an earlier message of their key. */
    private static final String ORDER = """
        WITH firsts AS (SELECT message_id, min(ended_at) AS first_end FROM sluice_lab.calls
                        WHERE group_name = ? AND outcome = 'success' GROUP BY message_id),
        seq AS (SELECT f.message_id, lag(f.message_id) OVER (PARTITION BY m.message_key ORDER BY f.first_end, f.message_id) AS prev
                FROM firsts f JOIN sluice_lab.msgs m ON m.id = f.message_id WHERE m.message_key IS NOT NULL)
        SELECT count(*) FROM seq WHERE prev > message_id""";

    /**
     * Every redelivery is counted: a handler call of a message in a group whose attempt is not above every earlier
     * call's of it (in start order) — a delivery the engine made again without counting it. The lab's handlers never
     * ask for a delay (which keeps the attempt), so none is exempt. Returns the count and the first such pair.
     */
    private static final String UNCOUNTED = """
        WITH seq AS (SELECT group_name, message_id, instance, call_no, attempt, started_at,
                            max(attempt) OVER w AS before,
                            (array_agg(instance || ' #' || call_no || ' attempt ' || attempt) OVER w)[count(*) OVER w] AS prev
                     FROM sluice_lab.calls
                     WINDOW w AS (PARTITION BY group_name, message_id ORDER BY started_at, instance, call_no
                                  ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)),
        bad AS (SELECT * FROM seq WHERE attempt <= before)
        SELECT (SELECT count(*) FROM bad),
               (SELECT group_name || ' message ' || message_id || ': ' || instance || ' #' || call_no || ' attempt ' || attempt
                       || ' after ' || prev FROM bad ORDER BY started_at LIMIT 1)""";

    private LabChecker() {
    }

    public static Check check(Connection c, long streamId) throws SQLException {
        String log = "\"" + Ledger.SLUICE_SCHEMA + "\".message_log_" + streamId;
        String queue = "\"" + Ledger.SLUICE_SCHEMA + "\".exception_queue_" + streamId;
        String groups = "\"" + Ledger.SLUICE_SCHEMA + "\".consumer_group_config";
        long partitionSize = scalar(c, "SELECT partition_size FROM \"" + Ledger.SLUICE_SCHEMA + "\".stream_config WHERE id = "
                + streamId);
        try (Statement s = c.createStatement()) {
            s.execute("SET work_mem = '256MB'");
            s.execute(Ledger.checkTables());
            s.execute(String.format(java.util.Locale.ROOT, CATALOGUE, log, Ledger.SLUICE_SCHEMA + ".message_log_" + streamId,
                    partitionSize));
        }
        long produced = scalar(c, "SELECT count(*) FROM sluice_lab.msgs");
        Map<String, Map<String, Long>> buckets = new TreeMap<>();
        long unbucketed = 0;
        for (String group : LabGroups.ALL) {
            Map<String, Long> counts = new LinkedHashMap<>();
            try (PreparedStatement ps = c.prepareStatement(String.format(BUCKETS, queue, groups))) {
                String regex = LabGroups.regex(group);
                ps.setString(1, group);
                ps.setString(2, group);
                ps.setString(3, group);
                ps.setString(4, regex);
                ps.setString(5, regex);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        counts.put(rs.getString(1), rs.getLong(2));
                    }
                }
            }
            unbucketed += counts.getOrDefault("unbucketed", 0L);
            buckets.put(group, counts);
        }
        // Known to exist (committed, or run by a handler) but missing from a log partition that was not dropped.
        long committedMissing = scalar(c, "SELECT count(*) FROM sluice_lab.msgs WHERE NOT in_log AND partition_kept");
        long retentionDropped = scalar(c, "SELECT count(*) FROM sluice_lab.msgs WHERE NOT in_log AND NOT partition_kept");
        long unexpected = scalar(c, UNEXPECTED);
        long duplicates = scalar(c, "SELECT coalesce(sum(n - 1), 0) FROM (SELECT count(*) AS n FROM sluice_lab.calls"
                + " WHERE outcome = 'success' GROUP BY group_name, message_id) x");
        Map<String, Long> byGroup = new LinkedHashMap<>();
        long orderViolations = 0;
        for (String group : LabGroups.KEY_ORDERED) {
            long v;
            try (PreparedStatement ps = c.prepareStatement(ORDER)) {
                ps.setString(1, group);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    v = rs.getLong(1);
                }
            }
            byGroup.put(group, v);
            orderViolations += v;
        }
        LabTimeline.Overlaps overlaps = LabTimeline.keyOverlaps(c, LabGroups.PARTITIONED);
        long uncounted;
        String uncountedExample;
        try (PreparedStatement ps = c.prepareStatement(UNCOUNTED); ResultSet rs = ps.executeQuery()) {
            rs.next();
            uncounted = rs.getLong(1);
            uncountedExample = rs.getString(2);
        }
        return new Check(produced, unbucketed + committedMissing, unexpected, unbucketed, duplicates, orderViolations,
                buckets, committedMissing, byGroup, overlaps.count(), overlaps.example(), retentionDropped, uncounted,
                uncountedExample);
    }

    static long scalar(Connection c, String sql) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql); ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** How many maintenance passes the run's managers recorded (the runs of the pass's first sweep; 0 when none). */
    static long maintenancePasses(Connection c) throws SQLException {
        return scalar(c, "SELECT coalesce(max(runs), 0) FROM \"" + Ledger.SLUICE_SCHEMA + "\".maintenance_sweep"
                + " WHERE name = 'worker_instances'");
    }

    /**
     * How many log partitions below the highest one were gone at the check (the janitor's retention dropped them);
     * reads the partition list {@link #check} recorded.
     */
    static long partitionsDropped(Connection c) throws SQLException {
        return scalar(c, "SELECT count(*) FROM generate_series(0, (SELECT coalesce(max(k), -1) FROM sluice_lab.kept)) g(k)"
                + " WHERE g.k NOT IN (SELECT k FROM sluice_lab.kept)");
    }
}
