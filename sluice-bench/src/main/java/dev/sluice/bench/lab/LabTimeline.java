package dev.sluice.bench.lab;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the handler calls' instants say, after {@link LabChecker#check} built the calls and the catalogue: calls of one
 * key of the partitioned group running in two processes at once, and how long each message a SIGKILLed consumer held
 * waited for its next delivery.
 *
 * <p>A call runs from its {@code started_at} to its {@code ended_at}; a call without an end ran until its process was
 * killed (the fault's instant, taken once the process was gone) or, stopped otherwise, until the last instant its
 * process recorded. Both instants are taken inside the handler, so each recorded interval lies within the real one: a
 * reported overlap happened.
 */
final class LabTimeline {
    /**
     * Where a call without an end stopped: its process's kill ({@code kills}), else the last instant that process
     * recorded ({@code lasts}). The common table expressions of every statement that reads calls' spans.
     */
    private static final String CALL_ENDS = """
        WITH kills AS (SELECT detail AS instance, min(at) AS at FROM sluice_lab.fault WHERE kind = 'kill' GROUP BY detail),
        lasts AS (SELECT instance, max(coalesce(ended_at, started_at)) AS at FROM sluice_lab.calls GROUP BY instance)
        """;

    /** The partitioned group's keyed calls, with each one's running maximum end of the calls of its key before it. */
    private static final String KEY_CALLS = """
        DROP TABLE IF EXISTS sluice_lab.key_calls;
        CREATE UNLOGGED TABLE sluice_lab.key_calls AS
        """ + CALL_ENDS + """
            , iv AS (SELECT m.message_key AS k, c.instance, c.message_id, c.started_at AS s, coalesce(c.ended_at, kl.at, l.at) AS e
                   FROM sluice_lab.calls c JOIN sluice_lab.msgs m ON m.id = c.message_id
                   LEFT JOIN kills kl ON kl.instance = c.instance LEFT JOIN lasts l ON l.instance = c.instance
                   WHERE c.group_name = '%s' AND m.message_key IS NOT NULL)
            SELECT *, max(e) OVER (PARTITION BY k ORDER BY s, instance, message_id
                                   ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before_end FROM iv;
        CREATE INDEX ON sluice_lab.key_calls (k, s);
        ANALYZE sluice_lab.key_calls;
        """;

    /**
     * Of the candidates (a call that started before some earlier call of its key ended), those that overlapped a call
     * of another process, with that call: the first per candidate.
     */
    private static final String OVERLAPS = """
        SELECT w.k, w.instance, w.message_id, w.s, o.instance, o.message_id, o.s, o.e
        FROM sluice_lab.key_calls w
        JOIN LATERAL (SELECT x.instance, x.message_id, x.s, x.e FROM sluice_lab.key_calls x
                      WHERE x.k = w.k AND x.s <= w.s AND x.e > w.s AND x.instance <> w.instance
                      ORDER BY x.s LIMIT 1) o ON true
        WHERE w.before_end > w.s
        ORDER BY w.k, w.s""";

    /**
     * Each killed instance's unfinished calls, and the next call of that message by anyone, if it began after the kill;
     * for a group that runs one message of a key at a time ({@link LabGroups#KEY_HELD}, the parameter), the spans between
     * the kill and that next call during which another message of its key was running in its group (it could not start).
     */
    private static final String REDELIVERIES = CALL_ENDS + """
        SELECT f.detail, s.group_name, s.message_id, s.attempt, extract(epoch FROM (f.at - s.started_at)),
               extract(epoch FROM (r.started_at - f.at)), r.instance || ' attempt ' || r.attempt,
               extract(epoch FROM f.at), extract(epoch FROM r.started_at), h.froms, h.tos
        FROM sluice_lab.fault f
        JOIN sluice_lab.calls s ON s.instance = f.detail AND s.ended_at IS NULL AND s.started_at <= f.at
        LEFT JOIN LATERAL (SELECT x.started_at, x.instance, x.attempt FROM sluice_lab.calls x
                           WHERE x.group_name = s.group_name AND x.message_id = s.message_id AND x.started_at > s.started_at
                           ORDER BY x.started_at LIMIT 1) r ON true
        LEFT JOIN LATERAL (SELECT array_agg(extract(epoch FROM b.started_at)::float8) AS froms,
                                  array_agg(extract(epoch FROM coalesce(b.ended_at, bk.at, bl.at))::float8) AS tos
                           FROM sluice_lab.msgs m JOIN sluice_lab.msgs o ON o.message_key = m.message_key AND o.id <> m.id
                           JOIN sluice_lab.calls b ON b.group_name = s.group_name AND b.message_id = o.id
                           LEFT JOIN kills bk ON bk.instance = b.instance LEFT JOIN lasts bl ON bl.instance = b.instance
                           WHERE m.id = s.message_id AND s.group_name = ANY(?) AND b.started_at < r.started_at
                             AND coalesce(b.ended_at, bk.at, bl.at) > f.at) h ON true
        WHERE f.kind = 'kill' AND (r.started_at IS NULL OR r.started_at > f.at)
        ORDER BY f.id, s.started_at""";

    /**
     * Each consumer process's running span: from its stream groups' start to its kill, or (not killed: it ended on its
     * own or was stopped after the drain) to the last instant it recorded a handler call.
     */
    private static final String RUNNING = CALL_ENDS + """
        SELECT r.instance, extract(epoch FROM min(r.at)), extract(epoch FROM coalesce(min(k.at), min(l.at), min(r.at)))
        FROM sluice_lab.consumer_ready r
        LEFT JOIN kills k ON k.instance = r.instance LEFT JOIN lasts l ON l.instance = r.instance
        GROUP BY r.instance""";

    private LabTimeline() {
    }

    /** How many calls overlapped another process's call of their key, and the first pair. */
    record Overlaps(long count, String example) {
    }

    static Overlaps keyOverlaps(Connection c, String group) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(String.format(KEY_CALLS, group.replace("'", "''")));
        }
        long count = 0;
        String example = null;
        try (PreparedStatement ps = c.prepareStatement(OVERLAPS); ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                count++;
                if (example == null) {
                    example = "key " + rs.getString(1) + ": message " + rs.getLong(3) + " started in " + rs.getString(2) + " at "
                            + rs.getTimestamp(4).toInstant() + " while message " + rs.getLong(6) + " ran in " + rs.getString(5)
                            + " from " + rs.getTimestamp(7).toInstant() + " until " + rs.getTimestamp(8).toInstant();
                }
            }
        }
        return new Overlaps(count, example);
    }

    /**
     * One message a killed consumer had started and not finished, and when another delivery of it began.
     *
     * @param kill              the killed instance
     * @param group             the group
     * @param messageId         the message
     * @param attempt           the killed instance's attempt
     * @param heldSeconds       how long before the kill the killed instance had started it
     * @param redeliverySeconds seconds from the kill to the next start of the message (null: none after the kill)
     * @param redeliveredBy     the instance that started it next, and with which attempt
     * @param coveredSeconds    of {@code redeliverySeconds}, the seconds during which another consumer process ran its
     *                          stream groups and no other message of the key was running in a group that runs one at a
     *                          time (null with it): what the redelivery bound applies to
     * @param keyHeldSeconds    of the seconds another consumer process ran, those the key was held by another message's
     *                          call (null with {@code redeliverySeconds})
     */
    public record Redelivery(String kill, String group, long messageId, int attempt, double heldSeconds,
                             Double redeliverySeconds, String redeliveredBy, Double coveredSeconds, Double keyHeldSeconds) {
    }

    /** A consumer process's running span in epoch seconds (see {@link #RUNNING}). */
    record Running(String instance, double from, double to) {
        /** Whether this process, not the victim, was running at {@code at}. */
        boolean coversFor(String victim, double at) {
            return !instance.equals(victim) && from <= at && at < to;
        }
    }

    /**
     * Every message each SIGKILLed consumer had started but not finished (no end, and no other call of it started
     * between that start and the kill — else the killed instance no longer held it), with the time from the kill to
     * its next start by any instance, and how much of that time another consumer process was running its groups.
     */
    static List<Redelivery> redeliveries(Connection c, List<Running> running) throws SQLException {
        List<Redelivery> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(REDELIVERIES)) {
            ps.setArray(1, c.createArrayOf("text", LabGroups.KEY_HELD.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    double v = rs.getDouble(6);
                    boolean none = rs.wasNull();
                    String kill = rs.getString(1);
                    Double covered = null;
                    Double keyHeld = null;
                    if (!none) {
                        double from = rs.getDouble(8);
                        double to = rs.getDouble(9);
                        List<double[]> held = spans(rs.getArray(10), rs.getArray(11));
                        double others = covered(from, to, kill, running);
                        covered = covered(from, to, kill, running, held);
                        keyHeld = others - covered;
                    }
                    out.add(new Redelivery(kill, rs.getString(2), rs.getLong(3), rs.getInt(4), rs.getDouble(5),
                            none ? null : v, rs.getString(7), covered, keyHeld));
                }
            }
        }
        return out;
    }

    private static List<double[]> spans(java.sql.Array froms, java.sql.Array tos) throws SQLException {
        List<double[]> out = new ArrayList<>();
        if (froms == null) {
            return out;
        }
        Double[] a = (Double[]) froms.getArray();
        Double[] b = (Double[]) tos.getArray();
        for (int i = 0; i < a.length; i++) {
            if (a[i] != null && b[i] != null) {
                out.add(new double[] {a[i], b[i]});
            }
        }
        return out;
    }

    static List<Running> running(Connection c) throws SQLException {
        List<Running> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(RUNNING); ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                out.add(new Running(rs.getString(1), rs.getDouble(2), rs.getDouble(3)));
            }
        }
        return out;
    }

    /**
     * The seconds of {@code [from, to]} during which at least one consumer process other than {@code victim} was
     * running its stream groups (the union of their spans, clipped). The lab kills a consumer every few seconds and a
     * replacement starts its groups many seconds after its launch on a loaded machine, so at times the victim was the
     * only consumer running: nobody could take its work over until a replacement ran, and that wait is the lab's, not
     * the takeover's.
     */
    static double covered(double from, double to, String victim, List<Running> running) {
        return covered(from, to, victim, running, List.of());
    }

    /**
     * {@link #covered(double, double, String, List)} less the instants some span of {@code keyHeld} covers: while another
     * message of its key ran in a group that runs one at a time, the message could not start, whoever held it.
     */
    static double covered(double from, double to, String victim, List<Running> running, List<double[]> keyHeld) {
        List<double[]> others = new ArrayList<>();
        for (Running r : running) {
            if (!r.instance().equals(victim)) {
                others.add(new double[] {r.from(), r.to()});
            }
        }
        List<double[]> up = union(others, from, to);
        List<double[]> held = union(keyHeld, from, to);
        double total = 0;
        for (double[] u : up) {
            total += u[1] - u[0];
            for (double[] h : held) {
                total -= Math.max(0, Math.min(u[1], h[1]) - Math.max(u[0], h[0]));
            }
        }
        return total;
    }

    /** The union of {@code spans} clipped to {@code [from, to]}: disjoint spans in order. */
    private static List<double[]> union(List<double[]> spans, double from, double to) {
        List<double[]> clipped = new ArrayList<>();
        for (double[] s : spans) {
            double a = Math.max(from, s[0]);
            double b = Math.min(to, s[1]);
            if (b > a) {
                clipped.add(new double[] {a, b});
            }
        }
        clipped.sort(java.util.Comparator.comparingDouble(x -> x[0]));
        List<double[]> out = new ArrayList<>();
        for (double[] s : clipped) {
            double[] last = out.isEmpty() ? null : out.get(out.size() - 1);
            if (last != null && s[0] <= last[1]) {
                last[1] = Math.max(last[1], s[1]);
            } else {
                out.add(s);
            }
        }
        return out;
    }

    /** How many of the kills came while no other consumer process was running its stream groups. */
    static long killsLeavingNoConsumer(Connection c, List<Running> running) throws SQLException {
        long n = 0;
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT detail, extract(epoch FROM at) FROM sluice_lab.fault WHERE kind = 'kill'"); ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                String victim = rs.getString(1);
                double at = rs.getDouble(2);
                if (running.stream().noneMatch(r -> r.coversFor(victim, at))) {
                    n++;
                }
            }
        }
        return n;
    }

    /**
     * For each SIGKILL: the longest wait, by {@code seconds} ({@link Redelivery#coveredSeconds} or
     * {@link Redelivery#redeliverySeconds}), until the redelivery of a message the killed instance held (see
     * {@link #redeliveries}); null when it held nothing that was delivered again.
     */
    static Map<String, Double> redeliverySeconds(List<Redelivery> redeliveries,
                                                 java.util.function.Function<Redelivery, Double> seconds) {
        Map<String, Double> out = new LinkedHashMap<>();
        for (Redelivery r : redeliveries) {
            Double s = seconds.apply(r);
            out.merge(r.kill(), s == null ? Double.NEGATIVE_INFINITY : s, Math::max);
        }
        out.replaceAll((k, v) -> v == Double.NEGATIVE_INFINITY ? null : v);
        return out;
    }
}
