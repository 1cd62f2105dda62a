package dev.sluice.internal.fleet;

import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.jdbc.Sql;
import dev.sluice.internal.notify.Channels;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Optional;

/**
 * The declarations of the fleet's workers ({@code worker_config} and its append-only {@code worker_config_log}):
 * a group's consumer worker with the group's registration, the system's workers on first use, and the
 * operator's targets. Built once per schema; statements in {@link WorkerSql}.
 */
public final class WorkerConfigs {
    /** The most instances a target may ask for (beyond it, -1 means the same: unlimited). */
    public static final int MAX_TARGET = 10_000;

    private final Db db;
    private final WorkerSql sql;
    private final String clientId;
    private final String channel;

    public WorkerConfigs(Db db, String schema, String quotedSchema, String clientId) {
        this.db = db;
        this.sql = new WorkerSql(quotedSchema);
        this.clientId = clientId;
        this.channel = Channels.forSchema(schema);
    }

    WorkerSql sql() {
        return sql;
    }

    String channel() {
        return channel;
    }

    // ------------------------------------------------------------------ the group's worker (registration's transaction)

    /** Creates a new group's consumer worker (unlimited instances). */
    public void createGroupWorker(Connection c, long groupId, String configDoc) throws SQLException {
        Sql.update(c, sql.insertGroupWorker, groupId, configDoc);
    }

    /** Records a declaration of the group on its worker and in the worker's log. */
    public void declareGroupWorker(Connection c, long groupId, String group, String configDoc, String action)
            throws SQLException {
        Sql.update(c, sql.updateGroupWorker, configDoc, groupId);
        Sql.update(c, sql.logGroupWorker, group, action, configDoc, clientId, groupId);
    }

    // ------------------------------------------------------------------ resolution and targets

    /**
     * The worker's id: a group's worker must exist (registration made it); a system worker is created on first
     * use with its default target (the manager 1, the others -1) and the creation logged.
     *
     * @throws SluiceException {@link ErrorCode#WORKER_NOT_FOUND} for a group that is not registered
     */
    long resolve(Connection c, WorkerKey key) throws SQLException {
        if (!key.systemOwned()) {
            java.util.Optional<Long> id = Sql.first(c, sql.groupWorker, rs -> rs.getLong(1), key.stream(), key.name());
            if (id.isEmpty()) {
                // Made here, or by another process at the same moment: either way a new statement sees it.
                Sql.update(c, sql.ensureGroupWorker, key.stream(), key.name());
                id = Sql.first(c, sql.groupWorker, rs -> rs.getLong(1), key.stream(), key.name());
            }
            return id.orElseThrow(() -> notFound(key));
        }
        int target = key.kind().equals(WorkerKey.MANAGER) ? 1 : -1;
        Object[] row = Sql.first(c, sql.upsertSystemWorker, rs -> new Object[] {rs.getLong(1), rs.getBoolean(3)},
                key.systemName(), target, key.systemName()).orElse(null);
        if (row == null) {
            // Another process created it at the same moment: our insert waited for its commit and did nothing, and the
            // statement's snapshot predates that commit. A new statement sees it.
            row = Sql.first(c, sql.systemWorker, rs -> new Object[] {rs.getLong(1), false}, key.systemName())
                    .orElseThrow(() -> new SluiceException(ErrorCode.SYSTEM_NOT_REGISTERED,
                            "the schema has no Sluice control plane to record the worker " + key + " in"));
        }
        if ((Boolean) row[1]) {
            Sql.update(c, sql.logWorker, row[0], "{\"action\":\"created\",\"target_instances\":" + target + "}", clientId);
        }
        return (Long) row[0];
    }

    /** The worker's id and target when it exists (no I/O beyond one read; nothing created). */
    Optional<long[]> find(Connection c, WorkerKey key) throws SQLException {
        return key.systemOwned()
                ? Sql.first(c, sql.systemWorker, rs -> new long[] {rs.getLong(1), rs.getInt(2)}, key.systemName())
                : Sql.first(c, sql.groupWorker, rs -> new long[] {rs.getLong(1), rs.getInt(2)}, key.stream(), key.name());
    }

    /**
     * Sets a worker's target instances — -1 unlimited, 0 paused, N at most N active — logs the declaration and
     * notifies every process of the schema, so running parts follow at once (at the latest at their next
     * heartbeat). Returns the target it replaced.
     *
     * @throws SluiceException {@link ErrorCode#INVALID_ARGUMENT} for a target below -1 or above {@link #MAX_TARGET}, or
     *                         a manager target other than 0 and 1; {@link ErrorCode#WORKER_NOT_FOUND} when the
     *                         worker does not exist
     */
    /** The target of a group's consumer worker (-1 when it has none), in the caller's transaction. */
    public int groupTarget(Connection c, String stream, String group) throws SQLException {
        return Sql.first(c, sql.groupWorker, rs -> rs.getInt(2), stream, group).orElse(-1);
    }

    public int setTarget(WorkerKey key, int target) {
        validateTarget(key, target);
        return db.transaction("set the target of " + key, c -> {
            long[] found = find(c, key).orElse(null);
            if (found == null && (key.kind().equals(WorkerKey.MANAGER) || key.kind().equals(WorkerKey.SCHEDULES))) {
                // The schema's two fixed workers can be declared before any process ran them (maintenance paused from
                // the start); a queue's worker must have run, so a mistyped queue name is refused, not recorded.
                long id = resolve(c, key);
                found = new long[] {id, key.kind().equals(WorkerKey.MANAGER) ? 1 : -1};
            }
            if (found == null) {
                throw notFound(key);
            }
            Sql.update(c, sql.setTarget, target, found[0]);
            Sql.update(c, sql.logWorker, found[0], "{\"action\":\"target\",\"target_instances\":" + target
                    + ",\"previous\":" + found[1] + "}", clientId);
            Sql.execute(c, "SELECT pg_notify(?, ?)", channel, Instances.WAKE_KEY);
            return (int) found[1];
        });
    }

    /** Checks a target before any round trip. */
    public static void validateTarget(WorkerKey key, int target) {
        if (target < -1 || target > MAX_TARGET) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "target instances must be -1 (unlimited), 0 (paused) or 1 to "
                    + MAX_TARGET + " (got " + target + ")");
        }
        if (key.kind().equals(WorkerKey.MANAGER) && target != 0 && target != 1) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "the manager's target must be 1 (one elected manager) or 0 "
                    + "(maintenance paused), got " + target);
        }
    }

    static SluiceException notFound(WorkerKey key) {
        return new SluiceException(ErrorCode.WORKER_NOT_FOUND, "no worker '" + key + "'"
                + (key.systemOwned() ? "" : ": the group is not registered"));
    }
}
