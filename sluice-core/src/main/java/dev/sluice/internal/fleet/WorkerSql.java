package dev.sluice.internal.fleet;

/**
 * Owner of the fleet tables — {@code worker_config}, {@code worker_config_log}, {@code worker_instance} and
 * {@code worker_instance_log} — built once per schema. A group's consumer worker is declared with the group
 * (in the group registration's transaction); the system's workers ({@code manager}, {@code schedules},
 * {@code queue:<name>}) on first use. Every claim and renewal of an instance writes its snapshot in the same
 * statement as the live-row change.
 */
final class WorkerSql {
    /** Serialises the claims of one worker's instances. Parameter: the advisory key text. */
    static final String LOCK_CLAIMS = "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))";

    // ---------------------------------------------------------------- worker_config and its log

    /** The group's consumer worker. Parameters: group id, metadata (json). */
    final String insertGroupWorker;
    /** Updates the consumer worker's metadata. Parameters: metadata (json), group id. */
    final String updateGroupWorker;
    /** Logs a group declaration. Parameters: group name, action, config (json), declared by, group id. */
    final String logGroupWorker;
    /**
     * A system-owned worker, created with its default target when missing; returns its id and target.
     * Parameters: name, target when created.
     */
    final String upsertSystemWorker;
    /** Logs a declaration of a worker. Parameters: worker id, snapshot (json), declared by. */
    final String logWorker;
    /** A group's consumer worker. Parameters: stream name, group name. Returns id, target. */
    final String groupWorker;
    /**
     * Creates a group's consumer worker when it is missing (a group written by an older or a hand-made installation).
     * Parameters: stream name, group name.
     */
    final String ensureGroupWorker;
    /** A system worker by name. Parameters: name. Returns id, target. */
    final String systemWorker;
    /** Sets a worker's target. Parameters: target, worker id. */
    final String setTarget;
    /** Every worker with its owner and live instance counts. No parameters. */
    final String listWorkers;

    // ---------------------------------------------------------------- worker_instance and its log

    /**
     * Claims an instance (run under {@link #LOCK_CLAIMS}) and snapshots it; returns id, expiry, the worker's target
     * how many live instances of the worker came before it, and the seconds until the first of those expires.
     * Idempotent by token: run again after a commit whose reply was lost, it renews the row the first run made.
     * Parameters: worker id, token, holder, failures, lease seconds.
     */
    final String claim;
    /**
     * The heartbeat of one process: renews every live instance whose token it holds and snapshots each, in one
     * statement; returns per renewed instance its token, id, its worker's target, how many live instances of
     * the worker come before it, and the seconds until the first of those expires (when a standby may take over).
     * Parameters: lease seconds, tokens (uuid[]).
     */
    final String renew;
    /**
     * A clean close: deletes live rows by token (snapshots stay) and, when one belonged to a capped or paused worker,
     * notifies the schema's channel so standbys take over at once. Parameters: tokens (uuid[]), channel.
     */
    final String release;
    /** The manager's cleanup of expired instances, a bounded batch. Parameters: batch size. */
    final String deleteExpired;
    /** Deletes snapshots older than the retention past their recorded expiry, a bounded batch. Parameters: seconds, batch. */
    final String sweepSnapshots;
    /** Every live or expired-but-not-cleaned instance, with its worker. No parameters. */
    final String listInstances;

    WorkerSql(String q) {
        String worker = q + ".worker_config";
        String workerLog = q + ".worker_config_log";
        String instance = q + ".worker_instance";
        String instanceLog = q + ".worker_instance_log";
        this.insertGroupWorker = "INSERT INTO " + worker
                + " (name, consumer_group_id, target_instances, metadata) VALUES ('consumer', ?, -1, ?::jsonb)";
        this.updateGroupWorker = "UPDATE " + worker + " SET metadata = ?::jsonb,"
                + " updated_at = now() WHERE consumer_group_id = ? AND name = 'consumer'";
        this.logGroupWorker = "INSERT INTO " + workerLog + " (worker_config_id, snapshot,"
                + " declared_by) SELECT id, jsonb_build_object('group', ?::text, 'action', ?::text, 'config', ?::jsonb), ? FROM "
                + worker + " WHERE consumer_group_id = ? AND name = 'consumer'";
        this.upsertSystemWorker = """
                WITH made AS (
                    INSERT INTO %1$s (name, system_id, target_instances)
                    SELECT ?, s.id, ? FROM %2$s s WHERE s.name = 'default'
                    ON CONFLICT ON CONSTRAINT worker_config_name_per_owner DO NOTHING
                    RETURNING id, target_instances)
                SELECT id, target_instances, true FROM made
                UNION ALL
                SELECT w.id, w.target_instances, false FROM %1$s w JOIN %2$s s ON s.id = w.system_id
                WHERE s.name = 'default' AND w.name = ? AND NOT EXISTS (SELECT 1 FROM made)
                """.formatted(worker, q + ".system_config");
        this.logWorker = "INSERT INTO " + workerLog + " (worker_config_id, snapshot, declared_by) VALUES (?, ?::jsonb, ?)";
        this.groupWorker = """
                SELECT w.id, w.target_instances FROM %1$s w
                JOIN %2$s g ON g.id = w.consumer_group_id JOIN %3$s s ON s.id = g.stream_id
                WHERE s.name = ? AND g.name = ? AND w.name = 'consumer'
                """.formatted(worker, q + ".consumer_group_config", q + ".stream_config");
        this.ensureGroupWorker = """
                INSERT INTO %1$s (name, consumer_group_id, target_instances)
                SELECT 'consumer', g.id, -1 FROM %2$s g JOIN %3$s s ON s.id = g.stream_id WHERE s.name = ? AND g.name = ?
                ON CONFLICT ON CONSTRAINT worker_config_name_per_owner DO NOTHING
                """.formatted(worker, q + ".consumer_group_config", q + ".stream_config");
        this.systemWorker = "SELECT w.id, w.target_instances FROM " + worker + " w WHERE w.system_id IS NOT NULL AND w.name = ?";
        this.setTarget = "UPDATE " + worker + " SET target_instances = ?, updated_at = now() WHERE id = ?";
        this.listWorkers = """
                SELECT w.id, w.name, s.name AS stream, g.name AS grp, w.target_instances, w.updated_at,
                       (SELECT count(*) FROM %4$s i WHERE i.worker_config_id = w.id AND i.expires_at > now()) AS live
                FROM %1$s w
                LEFT JOIN %2$s g ON g.id = w.consumer_group_id
                LEFT JOIN %3$s s ON s.id = g.stream_id
                ORDER BY w.system_id IS NULL, w.name, s.name, g.name
                """.formatted(worker, q + ".consumer_group_config", q + ".stream_config", instance);

        this.claim = """
                WITH made AS (
                    INSERT INTO %1$s (worker_config_id, token, holder, failures, expires_at)
                    VALUES (?, ?, ?, ?, now() + make_interval(secs => ?))
                    ON CONFLICT (token) DO UPDATE SET renewed_at = now(), expires_at = excluded.expires_at
                    RETURNING id, worker_config_id, token, holder, failures, created_at, expires_at),
                logged AS (
                    INSERT INTO %2$s (worker_config_id, instance_id, token, holder, failures, instance_created_at, expires_at)
                    SELECT worker_config_id, id, token, holder, failures, created_at, expires_at FROM made)
                SELECT m.id, m.expires_at, w.target_instances,
                       (SELECT count(*) FROM %1$s o WHERE o.worker_config_id = m.worker_config_id AND o.id < m.id
                        AND o.expires_at > now()),
                       (SELECT extract(epoch FROM min(o.expires_at) - now())::float8 FROM %1$s o
                        WHERE o.worker_config_id = m.worker_config_id AND o.id < m.id AND o.expires_at > now())
                FROM made m JOIN %3$s w ON w.id = m.worker_config_id
                """.formatted(instance, instanceLog, worker);
        this.renew = """
                WITH renewed AS (
                    UPDATE %1$s SET renewed_at = now(), expires_at = now() + make_interval(secs => ?)
                    WHERE token = ANY (?::uuid[]) AND expires_at > now()
                    RETURNING id, worker_config_id, token, holder, failures, created_at, expires_at),
                logged AS (
                    INSERT INTO %2$s (worker_config_id, instance_id, token, holder, failures, instance_created_at, expires_at)
                    SELECT worker_config_id, id, token, holder, failures, created_at, expires_at FROM renewed)
                SELECT r.token, r.id, w.target_instances, e.earlier, extract(epoch FROM e.first_expiry - now())::float8
                FROM renewed r JOIN %3$s w ON w.id = r.worker_config_id
                CROSS JOIN LATERAL (
                    SELECT count(*) AS earlier, min(o.expires_at) AS first_expiry FROM %1$s o
                    WHERE w.target_instances >= 0 AND o.worker_config_id = r.worker_config_id AND o.id < r.id
                      AND o.expires_at > now()) e
                """.formatted(instance, instanceLog, worker);
        this.release = """
                WITH gone AS (DELETE FROM %1$s WHERE token = ANY (?::uuid[]) RETURNING worker_config_id)
                SELECT pg_notify(?, 'fleet')::text FROM (
                    SELECT 1 FROM gone g JOIN %2$s w ON w.id = g.worker_config_id WHERE w.target_instances >= 0 LIMIT 1) capped
                """.formatted(instance, worker);
        this.deleteExpired = """
                DELETE FROM %1$s WHERE id = ANY (ARRAY(
                    SELECT id FROM %1$s WHERE expires_at <= now() ORDER BY expires_at LIMIT ? FOR UPDATE SKIP LOCKED))
                """.formatted(instance);
        this.sweepSnapshots = """
                DELETE FROM %1$s WHERE id = ANY (ARRAY(
                    SELECT id FROM %1$s WHERE expires_at < now() - make_interval(secs => ?) ORDER BY expires_at LIMIT ?))
                """.formatted(instanceLog);
        this.listInstances = """
                SELECT i.id, w.name, s.name AS stream, g.name AS grp, i.holder, i.failures, i.created_at, i.renewed_at,
                       i.expires_at, i.expires_at > now() AS live, w.target_instances,
                       (SELECT count(*) FROM %1$s o WHERE o.worker_config_id = i.worker_config_id AND o.id < i.id
                            AND o.expires_at > now()) AS earlier
                FROM %1$s i JOIN %2$s w ON w.id = i.worker_config_id
                LEFT JOIN %3$s g ON g.id = w.consumer_group_id
                LEFT JOIN %4$s s ON s.id = g.stream_id
                ORDER BY w.system_id IS NULL, w.name, s.name, g.name, i.id
                """.formatted(instance, worker, q + ".consumer_group_config", q + ".stream_config");
    }
}
