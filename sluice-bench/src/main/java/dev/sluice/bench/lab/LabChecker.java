package dev.sluice.bench.lab;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Classifies every message of the lab stream into exactly one bucket per group — delivered, dead,
 * compacted, other_version, filtered — by SQL joins of Sluice's tables and the ledger, and counts
 * what must be zero: lost (committed but in no bucket, or committed per the ledger but missing from
 * the log), unexpected (a message nobody produced, a handler call for a message that does not exist),
 * unbucketed, order violations of the ordered and the partitioned group, and key overlaps of the partitioned
 * group: two handler calls of one key, in different processes, running at the same time (from the ledger's
 * start and end instants of every call, see {@link #keyOverlaps}). Duplicates are reported, not failed.
 */
public final class LabChecker {

    /**
     * What the checker found.
     *
     * @param orderViolations        the sum of {@code orderViolationsByGroup}
     * @param orderViolationsByGroup per group whose keys are ordered ({@link LabGroups#KEY_ORDERED}), the order violations
     * @param keyOverlaps            partitioned group: handler calls that started while a call of the same key was running in
     *                               another process (must be 0)
     * @param keyOverlapExample      the first such pair, for the report (null when none)
     */
    public record Check(long produced, long lost, long unexpected, long unbucketed, long duplicates, long orderViolations,
                        Map<String, Map<String, Long>> buckets, long committedMissing, Map<String, Long> orderViolationsByGroup,
                        long keyOverlaps, String keyOverlapExample) {

        /** A check without the per-group figures (tests of the verdict rules). */
        public Check(long produced, long lost, long unexpected, long unbucketed, long duplicates, long orderViolations,
                     Map<String, Map<String, Long>> buckets, long committedMissing) {
            this(produced, lost, unexpected, unbucketed, duplicates, orderViolations, buckets, committedMissing, Map.of(), 0,
                    null);
        }
    }

    private LabChecker() {
    }

    public static Check check(Connection c, long streamId) throws SQLException {
        String log = "\"" + Ledger.SLUICE_SCHEMA + "\".message_log_" + streamId;
        String heads = "\"" + Ledger.SLUICE_SCHEMA + "\".compaction_head_" + streamId;
        String queue = "\"" + Ledger.SLUICE_SCHEMA + "\".exception_queue_" + streamId;
        String groups = "\"" + Ledger.SLUICE_SCHEMA + "\".consumer_group_config";
        long produced = scalar(c, "SELECT count(*) FROM " + log);
        Map<String, Map<String, Long>> buckets = new TreeMap<>();
        long unbucketed = 0;
        for (String group : LabGroups.ALL) {
            Map<String, Long> counts = new LinkedHashMap<>();
            try (PreparedStatement ps = c.prepareStatement(
                    "WITH g AS (SELECT id FROM " + groups + " WHERE name = ?),"
                    + " msgs AS (SELECT m.id, m.routing_key, m.schema_version,"
                    + "   (m.compaction_rank IS NOT NULL AND h.message_id IS DISTINCT FROM m.id) AS superseded"
                    + "   FROM " + log + " m LEFT JOIN " + heads + " h ON m.compaction_rank IS NOT NULL AND h.compaction_key = m.message_key)"
                    + " SELECT CASE"
                    + "   WHEN EXISTS (SELECT 1 FROM sluice_lab.handler_call hc WHERE hc.group_name = ? AND hc.message_id = msgs.id"
                    + "       AND hc.phase = 'end' AND hc.outcome = 'success') THEN 'delivered'"
                    + "   WHEN EXISTS (SELECT 1 FROM " + queue + " e, g WHERE e.consumer_group_id = g.id AND e.message_id = msgs.id"
                    + "       AND e.status = 'dead') THEN 'dead'"
                    + "   WHEN msgs.superseded THEN 'compacted'"
                    + "   WHEN msgs.schema_version <> 1 THEN 'other_version'"
                    + "   WHEN ?::text IS NOT NULL AND NOT coalesce(msgs.routing_key ~ ?::text, false) THEN 'filtered'"
                    + "   ELSE 'unbucketed' END AS bucket, count(*)"
                    + " FROM msgs GROUP BY 1 ORDER BY 1")) {
                String regex = LabGroups.regex(group);
                ps.setString(1, group);
                ps.setString(2, group);
                ps.setString(3, regex);
                ps.setString(4, regex);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        counts.put(rs.getString(1), rs.getLong(2));
                    }
                }
            }
            unbucketed += counts.getOrDefault("unbucketed", 0L);
            buckets.put(group, counts);
        }
        // Committed per the ledger (as new messages) but not in the log.
        long committedMissing = scalar(c, "SELECT count(*) FROM sluice_lab.produce_attempt a WHERE a.status = 'committed'"
                + " AND NOT EXISTS (SELECT 1 FROM " + log + " m WHERE m.id = a.message_id)");
        // In the log, but no producer attempted it.
        long unexpected = scalar(c, "SELECT count(*) FROM " + log + " m WHERE NOT EXISTS (SELECT 1 FROM sluice_lab.produce_attempt a"
                + " WHERE a.tag = convert_from(m.payload, 'UTF8')::jsonb->>'tag')")
                + scalar(c, "SELECT count(DISTINCT message_id) FROM sluice_lab.handler_call hc WHERE NOT EXISTS (SELECT 1 FROM "
                + log + " m WHERE m.id = hc.message_id)")
                // A duplicate must point at the original message, which must carry the same idempotency key.
                + scalar(c, "SELECT count(*) FROM sluice_lab.produce_attempt d WHERE d.status = 'duplicate' AND NOT EXISTS ("
                + " SELECT 1 FROM sluice_lab.produce_attempt o JOIN " + log + " m ON m.id = o.message_id"
                + " WHERE o.message_id = d.message_id AND o.idempotency_key = d.idempotency_key AND o.status <> 'duplicate')");
        long duplicates = scalar(c, "SELECT coalesce(sum(n - 1), 0) FROM (SELECT count(*) AS n FROM sluice_lab.handler_call"
                + " WHERE phase = 'end' AND outcome = 'success' GROUP BY group_name, message_id) x");
        Map<String, Long> byGroup = new LinkedHashMap<>();
        long orderViolations = 0;
        for (String group : LabGroups.KEY_ORDERED) {
            long v = orderViolations(c, log, group);
            byGroup.put(group, v);
            orderViolations += v;
        }
        Overlaps overlaps = keyOverlaps(c, log, LabGroups.PARTITIONED);
        return new Check(produced, unbucketed + committedMissing, unexpected, unbucketed, duplicates, orderViolations,
                buckets, committedMissing, byGroup, overlaps.count(), overlaps.example());
    }

    /** A keyed group's messages whose first success came before the first success of an earlier message of their key. */
    static long orderViolations(Connection c, String log, String group) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("WITH firsts AS (SELECT message_id, min(id) AS first_end"
                + "   FROM sluice_lab.handler_call WHERE group_name = ? AND phase = 'end' AND outcome = 'success'"
                + "   GROUP BY message_id),"
                + " seq AS (SELECT f.message_id, lag(f.message_id) OVER (PARTITION BY m.message_key ORDER BY f.first_end) AS prev"
                + "   FROM firsts f JOIN " + log + " m ON m.id = f.message_id WHERE m.message_key IS NOT NULL)"
                + " SELECT count(*) FROM seq WHERE prev > message_id")) {
            ps.setString(1, group);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** How many calls overlapped another process's call of their key, and the first pair. */
    record Overlaps(long count, String example) {
    }

    /**
     * Per key of {@code group}, handler calls that started while a call of the same key, in another process, had
     * started and not yet ended. A call runs from its {@code start} row to its {@code end} row (same call_id); a call
     * without an end ran until its process was SIGKILLed, or (stopped otherwise) until the last ledger row that
     * process wrote. Both rows are written inside the handler, so each recorded interval lies within the real one: a
     * reported overlap happened.
     */
    static Overlaps keyOverlaps(Connection c, String log, String group) throws SQLException {
        long count = 0;
        String example = null;
        try (PreparedStatement ps = c.prepareStatement("WITH kills AS (SELECT detail AS instance, min(at) AS at"
                + "   FROM sluice_lab.fault WHERE kind = 'kill' GROUP BY detail),"
                + " lasts AS (SELECT instance, max(at) AS at FROM sluice_lab.handler_call GROUP BY instance)"
                + " SELECT m.message_key, s.instance, s.message_id, s.at, coalesce(e.at, k.at, l.at)"
                + " FROM sluice_lab.handler_call s JOIN " + log + " m ON m.id = s.message_id"
                + " LEFT JOIN sluice_lab.handler_call e ON e.call_id = s.call_id AND e.phase = 'end'"
                + " LEFT JOIN kills k ON k.instance = s.instance LEFT JOIN lasts l ON l.instance = s.instance"
                + " WHERE s.group_name = ? AND s.phase = 'start' AND m.message_key IS NOT NULL"
                + " ORDER BY m.message_key, s.at, s.id")) {
            ps.setString(1, group);
            try (ResultSet rs = ps.executeQuery()) {
                String key = null;
                // per process: the latest end of a call of the current key, and which message that call ran
                Map<String, java.sql.Timestamp> ends = new java.util.HashMap<>();
                Map<String, Long> running = new java.util.HashMap<>();
                Map<String, java.sql.Timestamp> starts = new java.util.HashMap<>();
                while (rs.next()) {
                    String k = rs.getString(1);
                    String instance = rs.getString(2);
                    long message = rs.getLong(3);
                    java.sql.Timestamp start = rs.getTimestamp(4);
                    java.sql.Timestamp end = rs.getTimestamp(5);
                    if (!k.equals(key)) {
                        key = k;
                        ends.clear();
                        running.clear();
                        starts.clear();
                    }
                    for (Map.Entry<String, java.sql.Timestamp> other : ends.entrySet()) {
                        if (!other.getKey().equals(instance) && other.getValue().after(start)) {
                            count++;
                            if (example == null) {
                                example = "key " + k + ": message " + message + " started in " + instance + " at " + start
                                        + " while message " + running.get(other.getKey()) + " ran in " + other.getKey()
                                        + " from " + starts.get(other.getKey()) + " until " + other.getValue();
                            }
                            break;
                        }
                    }
                    java.sql.Timestamp previous = ends.get(instance);
                    if (previous == null || end.after(previous)) {
                        ends.put(instance, end);
                        running.put(instance, message);
                        starts.put(instance, start);
                    }
                }
            }
        }
        return new Overlaps(count, example);
    }

    /**
     * One message a killed consumer had started and not finished, and when another delivery of it began.
     *
     * @param kill          the killed instance
     * @param group         the group
     * @param messageId     the message
     * @param attempt       the killed instance's attempt
     * @param heldSeconds   how long before the kill the killed instance had started it
     * @param redeliverySeconds seconds from the kill to the next start of the message (null: none after the kill)
     * @param redeliveredBy the instance that started it next, and with which attempt
     */
    public record Redelivery(String kill, String group, long messageId, int attempt, double heldSeconds,
                             Double redeliverySeconds, String redeliveredBy) {
    }

    /**
     * Every message each SIGKILLed consumer had started but not finished (no end row after its start, and
     * no other instance started it between that start and the kill — else the killed instance no longer
     * held it), with the time from the kill to its next start by any instance.
     */
    public static java.util.List<Redelivery> redeliveries(Connection c) throws SQLException {
        java.util.List<Redelivery> out = new java.util.ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT f.detail, s.group_name, s.message_id, s.attempt, extract(epoch FROM (f.at - s.at)),"
                + "   extract(epoch FROM (r.at - f.at)), r.instance || ' attempt ' || r.attempt"
                + " FROM sluice_lab.fault f"
                + " JOIN sluice_lab.handler_call s ON s.instance = f.detail AND s.phase = 'start' AND s.at <= f.at"
                + " LEFT JOIN LATERAL (SELECT x.at, x.instance, x.attempt FROM sluice_lab.handler_call x"
                + "   WHERE x.group_name = s.group_name AND x.message_id = s.message_id AND x.phase = 'start' AND x.id > s.id"
                + "   ORDER BY x.id LIMIT 1) r ON true"
                + " WHERE f.kind = 'kill'"
                + "   AND NOT EXISTS (SELECT 1 FROM sluice_lab.handler_call e WHERE e.instance = s.instance"
                + "     AND e.group_name = s.group_name AND e.message_id = s.message_id AND e.phase = 'end' AND e.id > s.id)"
                + "   AND (r.at IS NULL OR r.at > f.at)"
                + " ORDER BY f.id, s.id")) {
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    double v = rs.getDouble(6);
                    out.add(new Redelivery(rs.getString(1), rs.getString(2), rs.getLong(3), rs.getInt(4), rs.getDouble(5),
                            rs.wasNull() ? null : v, rs.getString(7)));
                }
            }
        }
        return out;
    }

    /**
     * For each SIGKILL: the longest time from the kill to the redelivery of a message the killed instance
     * held (see {@link #redeliveries}); null when it held nothing that was delivered again.
     */
    public static Map<String, Double> redeliverySeconds(java.util.List<Redelivery> redeliveries) {
        Map<String, Double> out = new LinkedHashMap<>();
        for (Redelivery r : redeliveries) {
            out.merge(r.kill(), r.redeliverySeconds() == null ? Double.NEGATIVE_INFINITY : r.redeliverySeconds(), Math::max);
        }
        out.replaceAll((k, v) -> v == Double.NEGATIVE_INFINITY ? null : v);
        return out;
    }

    private static long scalar(Connection c, String sql) throws SQLException {
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
}
