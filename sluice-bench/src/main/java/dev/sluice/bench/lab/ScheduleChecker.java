package dev.sluice.bench.lab;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The schedule engine's checker, in SQL over Sluice's tables: the fires of every lab schedule (the tick stream's
 * messages and the tick queue's jobs, each with its {@code sluice-schedule} and {@code sluice-due-at} headers) must be
 * exactly one per due time, none missed between a schedule's first and last fire, every due time on its schedule's
 * grid, and each schedule's cursor must count as many fires as landed.
 *
 * <p>It builds {@code s_fires} (one row per fire) and {@code s_per} (one row per lab schedule) as unlogged tables, then
 * reads the figures off them.
 */
final class ScheduleChecker {
    private static final String S = "\"" + Ledger.SLUICE_SCHEMA + "\"";

    /** The lab schedules as a VALUES list: name, interval in ms. */
    private static final String PLANS = ScheduleEngine.PLANS.stream()
            .map(p -> String.format(Locale.ROOT, "('%s', %d)", p.name(), p.interval().toMillis()))
            .collect(Collectors.joining(", "));

    /** The catalogue (rebuilt by every check); {@code %1$s} is the tick stream's log table. */
    private static final String CATALOGUE = """
        DROP TABLE IF EXISTS sluice_lab.s_fires, sluice_lab.s_per;
        CREATE UNLOGGED TABLE sluice_lab.s_fires AS
            SELECT headers->>'sluice-schedule' AS schedule, (headers->>'sluice-due-at')::timestamptz AS due_at, created_at
            FROM %1$s
            UNION ALL
            SELECT headers->>'sluice-schedule', (headers->>'sluice-due-at')::timestamptz, created_at
            FROM %2$s.job WHERE queue = '%3$s';
        CREATE UNLOGGED TABLE sluice_lab.s_per AS
            SELECT p.name, p.interval_ms, count(f.due_at) AS fires, count(DISTINCT f.due_at) AS due_times,
                   coalesce(round(extract(epoch FROM max(f.due_at) - min(f.due_at)) * 1000 / p.interval_ms) + 1, 0) AS expected,
                   count(*) FILTER (WHERE (extract(epoch FROM f.due_at) * 1000)::bigint %% p.interval_ms <> 0) AS off_grid,
                   coalesce((SELECT c.fires FROM %2$s.schedule_config s JOIN %2$s.schedule_cursor c ON c.schedule_id = s.id
                             WHERE s.name = p.name), -1) AS cursor_fires
            FROM (VALUES %4$s) AS p (name, interval_ms)
            LEFT JOIN sluice_lab.s_fires f ON f.schedule = p.name
            GROUP BY p.name, p.interval_ms;
        """;

    /** The figures, in the section's order: name, then the query (one bigint). */
    private static final String[][] FIGURES = {
        {"schedules", "SELECT count(*) FROM sluice_lab.s_per"},
        {"fires", "SELECT count(*) FROM sluice_lab.s_fires"},
        {"due_times", "SELECT coalesce(sum(due_times), 0) FROM sluice_lab.s_per"},
        {"late_p99_ms", """
            SELECT coalesce(round(percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM created_at - due_at)) * 1000), 0)
            FROM sluice_lab.s_fires WHERE due_at IS NOT NULL"""},
        {"late_max_ms", """
            SELECT coalesce(round(max(extract(epoch FROM created_at - due_at)) * 1000), 0) FROM sluice_lab.s_fires"""},
        {"runners", """
            SELECT count(*) FROM (SELECT instance FROM sluice_lab.schedule_runner GROUP BY instance HAVING max(fires) > 0) r"""},
        {"runner_fires", "SELECT coalesce(sum(f), 0) FROM (SELECT max(fires) AS f FROM sluice_lab.schedule_runner GROUP BY instance) r"},
        // What must be zero.
        {"double_fires", "SELECT coalesce(sum(fires - due_times), 0) FROM sluice_lab.s_per"},
        {"missed", "SELECT coalesce(sum(expected - due_times), 0) FROM sluice_lab.s_per"},
        {"off_grid", "SELECT coalesce(sum(off_grid), 0) FROM sluice_lab.s_per"},
        {"silent", "SELECT count(*) FROM sluice_lab.s_per WHERE fires = 0"},
        {"unknown", """
            SELECT count(*) FROM sluice_lab.s_fires f
            WHERE f.due_at IS NULL OR NOT EXISTS (SELECT 1 FROM sluice_lab.s_per p WHERE p.name = f.schedule)"""},
        {"cursor_mismatches", "SELECT count(*) FROM sluice_lab.s_per WHERE cursor_fires <> fires"},
    };

    /** The figures that must be zero for a pass. */
    static final List<String> MUST_BE_ZERO = List.of("double_fires", "missed", "off_grid", "silent", "unknown",
            "cursor_mismatches");

    private ScheduleChecker() {
    }

    static LabEngine.Section check(Connection c) throws SQLException {
        long streamId = scalar(c, "SELECT id FROM " + S + ".stream_config WHERE name = '" + ScheduleEngine.STREAM + "'");
        try (Statement s = c.createStatement()) {
            s.execute(String.format(Locale.ROOT, CATALOGUE, S + ".message_log_" + streamId, S, ScheduleEngine.QUEUE, PLANS));
        }
        return LabEngine.Section.of(c, FIGURES, MUST_BE_ZERO, Map.of());
    }

    private static long scalar(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
