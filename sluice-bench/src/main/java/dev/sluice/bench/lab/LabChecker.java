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
 * unbucketed, and order violations of the ordered group. Duplicates are reported, not failed.
 */
public final class LabChecker {

    /** What the checker found. */
    public record Check(long produced, long lost, long unexpected, long unbucketed, long duplicates, long orderViolations,
                        Map<String, Map<String, Long>> buckets, long committedMissing) {
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
        long orderViolations = scalar(c, "WITH firsts AS (SELECT message_id, min(id) AS first_end FROM sluice_lab.handler_call"
                + "   WHERE group_name = '" + LabGroups.ORDERED + "' AND phase = 'end' AND outcome = 'success' GROUP BY message_id),"
                + " seq AS (SELECT f.message_id, lag(f.message_id) OVER (PARTITION BY m.message_key ORDER BY f.first_end) AS prev"
                + "   FROM firsts f JOIN " + log + " m ON m.id = f.message_id WHERE m.message_key IS NOT NULL)"
                + " SELECT count(*) FROM seq WHERE prev > message_id");
        return new Check(produced, unbucketed + committedMissing, unexpected, unbucketed, duplicates, orderViolations,
                buckets, committedMissing);
    }

    /**
     * For each SIGKILL: the longest time from the kill to the first redelivery (by another instance) of a
     * message the killed instance had started but not finished; null when it had nothing unfinished.
     */
    public static Map<String, Double> redeliverySeconds(Connection c) throws SQLException {
        Map<String, Double> out = new LinkedHashMap<>();
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT f.detail, max(extract(epoch FROM (r.first_restart - f.at)))"
                + " FROM sluice_lab.fault f"
                + " LEFT JOIN LATERAL (SELECT s.group_name, s.message_id FROM sluice_lab.handler_call s"
                + "   WHERE s.instance = f.detail AND s.phase = 'start' AND NOT EXISTS (SELECT 1 FROM sluice_lab.handler_call e"
                + "     WHERE e.instance = s.instance AND e.group_name = s.group_name AND e.message_id = s.message_id"
                + "     AND e.phase = 'end' AND e.id > s.id)) u ON true"
                + " LEFT JOIN LATERAL (SELECT min(x.at) AS first_restart FROM sluice_lab.handler_call x"
                + "   WHERE x.group_name = u.group_name AND x.message_id = u.message_id AND x.phase = 'start' AND x.at > f.at) r ON true"
                + " WHERE f.kind = 'kill' GROUP BY f.id, f.detail ORDER BY f.id")) {
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    double v = rs.getDouble(2);
                    out.put(rs.getString(1), rs.wasNull() ? null : v);
                }
            }
        }
        return out;
    }

    private static long scalar(Connection c, String sql) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql); ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
