package dev.sluice.internal.schedule;

import dev.sluice.internal.jdbc.Identifiers;

/**
 * Every statement that touches {@code schedule_config} and {@code schedule_cursor}. The cursor row is the
 * one-fire-per-due-time guard: a runner locks it ({@code FOR UPDATE ... SKIP LOCKED}), fires, and moves
 * {@code next_scheduled_at} forward in the same transaction; a runner that read the row before that commit
 * re-checks {@code next_scheduled_at <= now()} on the newest version (READ COMMITTED) and skips it. The
 * clock is the database's {@code now()}; every value is a bind parameter.
 */
final class ScheduleSql {
    /** The notification payload that wakes schedule runners (not numeric: numbers are stream ids). */
    static final String WAKE_KEY = "s:schedules";

    /** The columns {@link ScheduleStore} reads a schedule from, in order. */
    final String columns;
    /** One schedule with its cursor and target; parameter: name. */
    final String selectByName;
    /** Like {@link #selectByName}, locking the cursor row. */
    final String selectByNameForUpdate;
    /** Every schedule, by name. */
    final String selectAll;
    /**
     * The earliest due, unsuspended schedule nobody else is firing, locked; parameter: ids to leave out
     * (failing ones backing off). Also returns the database's {@code now()}.
     */
    final String claimDue;
    /** The earliest next due time of the unsuspended schedules (locked or not) and {@code now()}; parameter: ids to leave out. */
    final String nextDue;
    /** Parameters: stream name. Returns the stream's id and payload limit. */
    final String stream;
    /** Parameters: name, stream id, stream id, queue, queue, expression, zone, payload, content type, misfire, catch-up bound. Returns id. */
    final String insertConfig;
    /** Parameters: schedule id, next due time. */
    final String insertCursor;
    /** Parameters: stream id, stream id, queue, queue, expression, zone, payload, content type, misfire, catch-up bound, id. */
    final String updateConfig;
    /** Parameters: suspended, name. Returns the id. */
    final String setSuspended;
    /** Parameters: next due time, id. */
    final String moveCursor;
    /** Parameters: next due time, last due time, fires, id. */
    final String advanceCursor;
    /** Parameters: id. Counts a run-now fire. */
    final String countRunNow;
    /** Parameters: name. */
    final String delete;
    /** Parameters: channel. Wakes the runners of the schema. */
    final String wake;

    ScheduleSql(String schema) {
        String q = Identifiers.quote(schema);
        String config = q + ".schedule_config";
        String cursor = q + ".schedule_cursor";
        this.columns = "sc.id, sc.name, sc.expression, sc.zone, sc.target_kind, coalesce(st.name, sc.target_queue),"
                + " sc.payload, sc.content_type, sc.misfire, sc.catch_up_max, sc.suspended, cu.next_scheduled_at,"
                + " cu.last_scheduled_at, cu.last_fired_at, cu.fires, sc.created_at, sc.updated_at";
        String from = config + " sc JOIN " + cursor + " cu ON cu.schedule_id = sc.id LEFT JOIN " + q
                + ".stream_config st ON st.id = sc.stream_id";
        this.selectByName = "SELECT " + columns + " FROM " + from + " WHERE sc.name = ?";
        this.selectByNameForUpdate = selectByName + " FOR UPDATE OF cu";
        this.selectAll = "SELECT " + columns + " FROM " + from + " ORDER BY sc.name";
        this.claimDue = "SELECT " + columns + ", now() FROM " + from
                + " WHERE cu.next_scheduled_at <= now() AND NOT sc.suspended AND sc.id <> ALL (?)"
                + " ORDER BY cu.next_scheduled_at LIMIT 1 FOR UPDATE OF cu SKIP LOCKED";
        this.nextDue = "SELECT min(cu.next_scheduled_at), now() FROM " + cursor + " cu JOIN " + config
                + " sc ON sc.id = cu.schedule_id WHERE NOT sc.suspended AND cu.next_scheduled_at IS NOT NULL"
                + " AND sc.id <> ALL (?)";
        this.stream = "SELECT id, max_payload_bytes FROM " + q + ".stream_config WHERE name = ?";
        // A stream target is owned by its stream, a queue target by the system row (the exactly-one-owner CHECK).
        this.insertConfig = "INSERT INTO " + config + " (name, system_id, stream_id, target_kind, target_queue, expression,"
                + " zone, payload, content_type, misfire, catch_up_max)"
                + " SELECT ?, CASE WHEN ?::bigint IS NULL THEN s.id END, ?::bigint,"
                + " CASE WHEN ?::text IS NULL THEN 'stream' ELSE 'queue' END, ?::text, ?, ?, ?, ?, ?, ?"
                + " FROM " + q + ".system_config s WHERE s.name = 'default' RETURNING id";
        this.insertCursor = "INSERT INTO " + cursor + " (schedule_id, next_scheduled_at) VALUES (?, ?)";
        this.updateConfig = "UPDATE " + config + " sc SET system_id = CASE WHEN ?::bigint IS NULL THEN"
                + " (SELECT id FROM " + q + ".system_config WHERE name = 'default') END, stream_id = ?::bigint,"
                + " target_kind = CASE WHEN ?::text IS NULL THEN 'stream' ELSE 'queue' END, target_queue = ?::text,"
                + " expression = ?, zone = ?, payload = ?, content_type = ?, misfire = ?, catch_up_max = ?, updated_at = now()"
                + " WHERE id = ?";
        this.setSuspended = "UPDATE " + config + " SET suspended = ?, updated_at = now() WHERE name = ? RETURNING id";
        this.moveCursor = "UPDATE " + cursor + " SET next_scheduled_at = ?, updated_at = now() WHERE schedule_id = ?";
        this.advanceCursor = "UPDATE " + cursor + " SET next_scheduled_at = ?, last_scheduled_at = ?, fires = fires + ?,"
                + " last_fired_at = now(), updated_at = now() WHERE schedule_id = ?";
        this.countRunNow = "UPDATE " + cursor + " SET fires = fires + 1, last_fired_at = now(), updated_at = now()"
                + " WHERE schedule_id = ? RETURNING clock_timestamp()";
        this.delete = "DELETE FROM " + config + " WHERE name = ?";
        this.wake = "SELECT pg_notify(?, '" + WAKE_KEY + "')";
    }
}
