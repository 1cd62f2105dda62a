package dev.sluice.internal.queue;

/**
 * The statements that end jobs — finish (ack, with or without a result), settle (retry, fail, discard), rescue of
 * expired claims, expiry of unclaimed jobs, cancel — and the redrive that brings dead jobs back. Each writes the run
 * record, the event and the waiters' notification in the same statement ({@link RunSql#recordEnd}). Built once per
 * schema by {@link QueueSql}, the owner of the job tables.
 *
 * <p><b>Two variants.</b> A job with children ({@code dependents > 0}) must release or cancel them in the same
 * transaction, with a second statement whose snapshot sees every child that registered while the end waited for
 * the parent's row lock. The autocommit variants (suffix {@code Plain}) therefore only touch rows without children
 * ({@code dependents = 0}, evaluated on the row's latest version); the others run inside a transaction that the
 * caller completes with {@link RunSql#releaseChildren}. Jobs with children are rare, so the usual cost is one
 * statement, as before the run model.
 */
final class EndSql {
    /** The job columns a job keeps when it moves to {@code job_dead} and back (not {@code event_seq}: it advances). */
    static final String KEPT = "id, queue, payload, content_type, headers, priority, run_at, expires_at,"
            + " visibility_timeout_ns, max_attempts, backoff_base_ns, backoff_max_ns, dead_letter_retention_ns, attempts,"
            + " worker_id, claimed_at, unique_key, created_at, keep_runs_ns, keep_events_ns, first_claimed_at";
    private static final String RETENTION = "(g.dead_letter_retention_ns / 1000) * interval '1 microsecond'";
    private static final String NO_CHILDREN = "AND j.dependents = 0";
    private static final String LOCK_TIMEOUT = "set_config('lock_timeout', '2s', true)";

    final String finishPlain;
    final String finish;
    final String settlePlain;
    final String settle;
    final String rescuePlain;
    final String rescueParents;
    final String expirePlain;
    final String expireParents;
    final String cancel;
    final String reviveAll;
    final String redriveBatch;

    EndSql(String job, String jobDead, RunSql runs) {
        String ch = runs.channelLiteral();

        // The ack of claims, each with its result (NULL for none): the row goes, its record and event are written.
        // A job whose cancel was requested ends cancelled instead (keeping the result it produced).
        // Parameters: ids, token indexes (1-based), results, result content types, tokens.
        // Returns one row per ended job: id, cancelled, has children; and the waiters notified.
        String finish = """
            WITH lt AS MATERIALIZED (SELECT %5$s AS v),
            a AS (SELECT * FROM unnest(?::bigint[], ?::int[], ?::bytea[], ?::text[]) AS a(id, ti, res, rct)),
            gone AS (
                DELETE FROM %1$s j USING a, lt
                WHERE j.id = a.id AND j.claim_token = (?::uuid[])[a.ti] AND j.claim_expires_at > now() %4$s
                RETURNING j.id, j.queue, j.content_type, j.headers, j.priority, j.attempts, j.max_attempts, j.worker_id,
                          j.first_claimed_at, j.created_at, j.last_error, j.unique_key, j.keep_runs_ns, j.keep_events_ns,
                          j.event_seq, j.awaited, j.cancel_requested, j.dependents, a.res, a.rct),
            ended AS (%2$s FROM gone g),
            %3$s
            SELECT e.id, e.cancel_requested, e.dependents > 0, (SELECT count(*) FROM ended_wake) FROM ended e
            """;
        String finishEnded = ended("g.last_error", "CASE WHEN g.cancel_requested THEN 'cancelled' ELSE 'succeeded' END",
                "CASE WHEN g.cancel_requested THEN 'cancel requested while it ran' END", "g.res", "g.rct");
        this.finishPlain = finish.formatted(job, finishEnded, runs.recordEnd("ended"), NO_CHILDREN, LOCK_TIMEOUT);
        this.finish = finish.formatted(job, finishEnded, runs.recordEnd("ended"), "", LOCK_TIMEOUT);

        // retry, fail and discard of one claim: back to pending (after the delay, or the backoff) with a retried
        // event, or — on its last attempt, when discarded, or when its cancel was requested — ended: dead (failed),
        // discarded, or cancelled. Parameters: id, token, discard, error, dead reason, delay µs (NULL: backoff).
        // Returns: back to pending, ended dead/discarded, ended cancelled, has children.
        String settle = """
            WITH p AS MATERIALIZED (SELECT ?::bigint AS id, ?::uuid AS token, ?::boolean AS discard, ?::text AS error,
                                           ?::text AS dead_reason, ?::bigint AS delay_us, %7$s AS lt),
            cur AS MATERIALIZED (
                SELECT j.id FROM %1$s j, p
                WHERE j.id = p.id AND j.claim_token = p.token AND j.state = 'processing' AND j.claim_expires_at > now() %6$s
                FOR UPDATE OF j),
            gone AS (
                DELETE FROM %1$s j USING p
                WHERE j.id IN (SELECT id FROM cur) AND (j.attempts >= j.max_attempts OR p.discard OR j.cancel_requested)
                RETURNING j.*),
            buried AS (
                INSERT INTO %2$s (%3$s, event_seq, last_error, reason, died_at, purge_after)
                SELECT %8$s, g.event_seq + 1, coalesce(p.error, g.last_error), p.dead_reason, now(), now() + %4$s
                FROM gone g, p WHERE NOT g.cancel_requested
                RETURNING id),
            ended AS (%5$s FROM gone g, p),
            %9$s,
            back AS (
                UPDATE %1$s j SET state = 'pending', claim_token = NULL, claim_expires_at = NULL,
                    run_at = now() + CASE WHEN p.delay_us IS NOT NULL THEN p.delay_us * interval '1 microsecond' ELSE %10$s END,
                    last_error = coalesce(p.error, j.last_error), event_seq = j.event_seq + 1, updated_at = now()
                FROM p
                WHERE j.id IN (SELECT id FROM cur) AND j.attempts < j.max_attempts AND NOT p.discard AND NOT j.cancel_requested
                RETURNING j.id, j.queue, j.keep_runs_ns, j.keep_events_ns, j.event_seq, j.attempts, j.worker_id, j.run_at,
                          j.last_error),
            %11$s,
            woke AS (SELECT pg_notify(%12$s, '%13$s' || queue) FROM back)
            SELECT (SELECT count(*) FROM back) + 0 * (SELECT count(*) FROM woke),
                   (SELECT count(*) FROM ended WHERE status <> 'cancelled'),
                   (SELECT count(*) FROM ended WHERE status = 'cancelled') + 0 * (SELECT count(*) FROM ended_wake),
                   (SELECT coalesce(bool_or(dependents > 0), false) FROM ended)
            """;
        String settleEnded = ended("coalesce(p.error, g.last_error)",
                "CASE WHEN g.cancel_requested THEN 'cancelled' WHEN p.discard THEN 'discarded' ELSE 'dead' END",
                "CASE WHEN g.cancel_requested THEN 'cancel requested while it ran' WHEN p.discard THEN NULL ELSE p.dead_reason END",
                "NULL::bytea", "NULL::text");
        String retried = runs.events("back", "s.event_seq", "'retried'", "s.attempts", "s.worker_id", "s.last_error", "s.run_at");
        this.settlePlain = settle.formatted(job, jobDead, KEPT, RETENTION, settleEnded, NO_CHILDREN, LOCK_TIMEOUT,
                kept("g."), runs.recordEnd("ended"), QueueSql.BACKOFF, retried, ch, QueueSql.WAKE_PREFIX);
        this.settle = settle.formatted(job, jobDead, KEPT, RETENTION, settleEnded, "", LOCK_TIMEOUT,
                kept("g."), runs.recordEnd("ended"), QueueSql.BACKOFF, retried, ch, QueueSql.WAKE_PREFIX);

        // Expired claims, a batch at a time: back to pending after the backoff (a rescued event), or ended — dead
        // (claim_expired) on the last attempt, cancelled when a cancel was requested. Parameters: batch.
        // Returns: back to pending, ended, the ids of ended jobs with children (NULL when none).
        String rescue = """
            WITH expired AS MATERIALIZED (
                SELECT id FROM %1$s j
                WHERE j.state = 'processing' AND j.claim_expires_at <= now() %6$s
                ORDER BY j.claim_expires_at
                LIMIT ? FOR UPDATE SKIP LOCKED),
            gone AS (
                DELETE FROM %1$s j WHERE j.id = ANY (ARRAY(SELECT id FROM expired))
                  AND (j.attempts >= j.max_attempts OR j.cancel_requested)
                RETURNING j.*),
            buried AS (
                INSERT INTO %2$s (%3$s, event_seq, last_error, reason, died_at, purge_after)
                SELECT %7$s, g.event_seq + 1, %8$s, 'claim_expired', now(), now() + %4$s
                FROM gone g WHERE NOT g.cancel_requested
                RETURNING id),
            ended AS (%5$s FROM gone g),
            %9$s,
            back AS (
                UPDATE %1$s j SET state = 'pending', claim_token = NULL, claim_expires_at = NULL,
                    run_at = now() + %10$s, last_error = %11$s, event_seq = j.event_seq + 1, updated_at = now()
                WHERE j.id = ANY (ARRAY(SELECT id FROM expired)) AND j.attempts < j.max_attempts AND NOT j.cancel_requested
                RETURNING j.id, j.queue, j.keep_runs_ns, j.keep_events_ns, j.event_seq, j.attempts, j.worker_id, j.run_at,
                          j.last_error),
            %12$s,
            woke AS (SELECT pg_notify(%13$s, '%14$s' || queue) FROM (SELECT DISTINCT queue FROM back) b)
            SELECT (SELECT count(*) FROM back) + 0 * (SELECT count(*) FROM woke),
                   (SELECT count(*) FROM ended) + 0 * (SELECT count(*) FROM ended_wake) + 0 * (SELECT count(*) FROM buried),
                   (SELECT array_agg(id) FROM ended WHERE dependents > 0)
            """;
        String expiredText = "'claim expired: worker ' || coalesce(g.worker_id, '?') || ' stopped heart-beating'";
        String rescueEnded = ended("CASE WHEN g.cancel_requested THEN g.last_error ELSE " + expiredText + " END",
                "CASE WHEN g.cancel_requested THEN 'cancelled' ELSE 'dead' END",
                "CASE WHEN g.cancel_requested THEN 'cancel requested while it ran (its claim expired)' ELSE 'claim_expired' END",
                "NULL::bytea", "NULL::text");
        String rescued = runs.events("back", "s.event_seq", "'rescued'", "s.attempts", "s.worker_id", "s.last_error", "s.run_at");
        String backError = "'claim expired: worker ' || coalesce(j.worker_id, '?') || ' stopped heart-beating'";
        this.rescuePlain = rescue.formatted(job, jobDead, KEPT, RETENTION, rescueEnded, "AND j.dependents = 0", kept("g."),
                expiredText, runs.recordEnd("ended"), QueueSql.BACKOFF, backError, rescued, ch, QueueSql.WAKE_PREFIX);
        this.rescueParents = rescue.formatted(job, jobDead, KEPT, RETENTION, rescueEnded, "AND j.dependents > 0", kept("g."),
                expiredText, runs.recordEnd("ended"), QueueSql.BACKOFF, backError, rescued, ch, QueueSql.WAKE_PREFIX);

        // Pending jobs past their expires_at, a batch at a time: dead (expired), never claimed. Parameters: batch.
        // Returns: ended, the ids of ended jobs with children (NULL when none).
        String expire = """
            WITH doomed AS MATERIALIZED (
                SELECT id FROM %1$s j
                WHERE j.state = 'pending' AND j.expires_at IS NOT NULL AND j.expires_at <= now() %6$s
                ORDER BY j.expires_at
                LIMIT ? FOR UPDATE SKIP LOCKED),
            gone AS (DELETE FROM %1$s j WHERE j.id = ANY (ARRAY(SELECT id FROM doomed)) RETURNING j.*),
            buried AS (
                INSERT INTO %2$s (%3$s, event_seq, last_error, reason, died_at, purge_after)
                SELECT %7$s, g.event_seq + 1, 'expired unclaimed at ' || g.expires_at, 'expired', now(), now() + %4$s
                FROM gone g
                RETURNING id),
            ended AS (%5$s FROM gone g),
            %8$s
            SELECT (SELECT count(*) FROM ended) + 0 * (SELECT count(*) FROM ended_wake) + 0 * (SELECT count(*) FROM buried),
                   (SELECT array_agg(id) FROM ended WHERE dependents > 0)
            """;
        String expireEnded = ended("'expired unclaimed at ' || g.expires_at", "'dead'", "'expired'", "NULL::bytea",
                "NULL::text");
        this.expirePlain = expire.formatted(job, jobDead, KEPT, RETENTION, expireEnded, "AND j.dependents = 0", kept("g."),
                runs.recordEnd("ended"));
        this.expireParents = expire.formatted(job, jobDead, KEPT, RETENTION, expireEnded, "AND j.dependents > 0", kept("g."),
                runs.recordEnd("ended"));

        // An operator's cancel of one job (in a transaction): a pending or waiting job ends cancelled at once (its
        // edges as a child go); a running one is flagged. Parameters: id, queue, reason.
        // Returns: the state found (NULL: not live), flagged, ended, has children.
        this.cancel = """
            WITH p AS MATERIALIZED (SELECT ?::bigint AS id, ?::text AS queue, ?::text AS why, %5$s AS lt),
            cur AS MATERIALIZED (SELECT j.id, j.state FROM %1$s j, p WHERE j.id = p.id AND j.queue = p.queue FOR UPDATE OF j),
            flagged AS (
                UPDATE %1$s j SET cancel_requested = true, updated_at = now()
                WHERE j.id IN (SELECT id FROM cur WHERE state = 'processing') RETURNING j.id),
            gone AS (DELETE FROM %1$s j WHERE j.id IN (SELECT id FROM cur WHERE state IN ('pending', 'waiting')) RETURNING j.*),
            ended AS (%2$s FROM gone g, p),
            %3$s,
            edges AS (DELETE FROM %4$s WHERE child_id IN (SELECT id FROM gone))
            SELECT (SELECT state FROM cur), (SELECT count(*) FROM flagged),
                   (SELECT count(*) FROM ended) + 0 * (SELECT count(*) FROM ended_wake),
                   (SELECT coalesce(bool_or(dependents > 0), false) FROM ended)
            """.formatted(job, ended("g.last_error", "'cancelled'", "p.why", "NULL::bytea", "NULL::text"),
                runs.recordEnd("ended"), runs.dependencyTable(), LOCK_TIMEOUT);

        // The tail of both redrives: the deleted dead rows ("gone") back into the job table as pending, attempts
        // reset, due now, no expiry, id and stamps kept, the trail continued (a revived event) and the run record
        // dropped (the job is live again); one wake-up for the queue. Returns the redriven ids.
        String revivedBack = """
            back AS (
                INSERT INTO %1$s (id, queue, payload, content_type, headers, priority, run_at, expires_at,
                                  visibility_timeout_ns, max_attempts, backoff_base_ns, backoff_max_ns,
                                  dead_letter_retention_ns, attempts, state, worker_id, claimed_at, last_error,
                                  unique_key, created_at, updated_at, keep_runs_ns, keep_events_ns, first_claimed_at, event_seq)
                SELECT id, queue, payload, content_type, headers, priority, now(), NULL,
                       visibility_timeout_ns, max_attempts, backoff_base_ns, backoff_max_ns,
                       dead_letter_retention_ns, 0, 'pending', worker_id, claimed_at, last_error,
                       unique_key, created_at, now(), keep_runs_ns, keep_events_ns, first_claimed_at, event_seq + 1
                FROM gone
                RETURNING id, queue, keep_runs_ns, keep_events_ns, event_seq),
            %2$s,
            unrecorded AS (DELETE FROM %3$s WHERE id IN (SELECT id FROM back)),
            woke AS (SELECT pg_notify(?, '%4$s' || min(queue)) FROM back HAVING count(*) > 0)
            SELECT b.id FROM back b LEFT JOIN woke ON true
            """.formatted(job, runs.events("back", "s.event_seq", "'revived'", "NULL::int", "NULL::text", "NULL::text",
                "NULL::timestamptz"), runs.run(), QueueSql.WAKE_PREFIX);

        // Dead jobs back to pending, in one statement (for several ids the caller's transaction decides all or
        // nothing). Parameters: queue, ids, channel. Returns the revived ids.
        this.reviveAll = """
            WITH gone AS (
                DELETE FROM %1$s WHERE queue = ? AND id = ANY(?::bigint[]) RETURNING *),
            """.formatted(jobDead) + revivedBack;

        // An operator's redrive of every dead job of a queue, a batch at a time (each its own transaction), repeated
        // until none moves. A dead job whose unique key a live job holds, or an older dead job of the queue holds
        // too, is left dead (so a batch never violates job_unique_key_idx). Parameters: queue, batch, channel.
        this.redriveBatch = """
            WITH gone AS (
                DELETE FROM %2$s WHERE id = ANY (ARRAY(
                    SELECT d.id FROM %2$s d
                    WHERE d.queue = ?
                      AND (d.unique_key IS NULL
                           OR (NOT EXISTS (SELECT 1 FROM %1$s j WHERE j.queue = d.queue AND j.unique_key = d.unique_key)
                               AND NOT EXISTS (SELECT 1 FROM %2$s o
                                               WHERE o.queue = d.queue AND o.unique_key = d.unique_key AND o.id < d.id)))
                    ORDER BY d.id LIMIT ? FOR UPDATE SKIP LOCKED)) RETURNING *),
            """.formatted(job, jobDead) + revivedBack;
    }

    /** {@link #KEPT} with every column prefixed by {@code alias}. */
    private static String kept(String alias) {
        StringBuilder b = new StringBuilder();
        for (String c : KEPT.split(",\\s*")) {
            if (b.length() > 0) {
                b.append(", ");
            }
            b.append(alias).append(c.trim());
        }
        return b.toString();
    }

    /**
     * The SELECT list of an {@code ended} CTE over the deleted rows {@code g}: {@link RunSql#SOURCE_COLUMNS} with the
     * last error given, then the status, reason, and the result.
     */
    private static String ended(String lastError, String status, String reason, String result, String resultCt) {
        return "SELECT g.id, g.queue, g.content_type, g.headers, g.priority, g.attempts, g.max_attempts,"
                + " g.worker_id, g.first_claimed_at, g.created_at, " + lastError + " AS last_error, g.unique_key,"
                + " g.keep_runs_ns, g.keep_events_ns, g.event_seq, g.awaited, g.cancel_requested, g.dependents, "
                + status + " AS status, " + reason + " AS reason, " + result + " AS result, " + resultCt + " AS result_ct";
    }
}
