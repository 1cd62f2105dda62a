package dev.sluice.internal.queue;

import java.time.Duration;

/**
 * The statements of the run model's own tables — {@code job_run} (run records), {@code job_event} (the event trail)
 * and {@code job_dependency} (parents and children) — and the CTE fragments every job statement uses to write them in
 * the same statement as the state change they describe. Built once per schema, by {@link QueueSql} only: the job
 * family's tables ({@code job}, {@code job_dead} and these three) have one owner, {@link QueueSql}, whose statements
 * live in three rooms (this class, {@link EndSql} for the ends of jobs, and {@code QueueSql} itself for enqueue and
 * claims). See docs/runs.md.
 *
 * <p>Fragments expect a source CTE whose rows are jobs, with the columns of {@link #SOURCE_COLUMNS}, and are named
 * after it ({@code <src>_run}, {@code <src>_event}, {@code <src>_wake}). A statement that uses {@link #recordEnd}
 * must reference {@code <src>_wake} in its final SELECT: a CTE without side effects runs only when read.
 */
final class RunSql {
    static final String JOB_RUN = "job_run";
    static final String JOB_EVENT = "job_event";
    static final String JOB_DEPENDENCY = "job_dependency";
    /** The notification payload prefix of run ends: {@code r:<job id>}, sent only when a waiter is present. */
    static final String END_PREFIX = "r:";
    /** How long a record is kept for a waiter when the job does not keep runs. */
    static final Duration AWAIT_GRACE = Duration.ofMinutes(5);

    /**
     * The job columns a source CTE of {@link #recordEnd} must expose (a {@code DELETE … RETURNING} of these, or a
     * SELECT naming them), besides the statement's own {@code status}, {@code reason}, {@code result} and
     * {@code result_ct}.
     */
    static final String SOURCE_COLUMNS = "id, queue, content_type, headers, priority, attempts, max_attempts,"
            + " worker_id, first_claimed_at, created_at, last_error, unique_key, keep_runs_ns, keep_events_ns, event_seq,"
            + " awaited, cancel_requested, dependents";

    private final String run;
    private final String event;
    private final String dependency;
    private final String channelLiteral;

    final String runById;
    final String endedById;
    final String events;
    final String runsPage;
    final String sweepRuns;
    final String sweepEvents;
    final String awaitMark;
    final String lockParents;
    final String parentStatus;
    final String insertEdges;
    final String releaseChildren;
    final String cancelWaiting;

    /** @param q the quoted schema; @param channel the schema's notification channel (a validated name) */
    RunSql(String q, String channel) {
        this.run = q + "." + JOB_RUN;
        this.event = q + "." + JOB_EVENT;
        this.dependency = q + "." + JOB_DEPENDENCY;
        String job = q + "." + QueueSql.JOB;
        String dead = q + "." + QueueSql.JOB_DEAD;
        this.channelLiteral = "'" + channel.replace("'", "''") + "'";

        String runColumns = "r.id, r.queue, r.status, r.reason, r.attempts, r.max_attempts, r.priority, r.enqueued_at,"
                + " r.first_started_at, r.finished_at, r.worker_id, d.payload, r.content_type, r.result,"
                + " r.result_content_type, r.last_error, r.unique_key, r.headers::text, r.purge_after";
        // One job's run, in one statement (one snapshot: a job that ends meanwhile is seen either live or ended,
        // never neither): its record (the payload joined back from its dead job), else its dead job read as a
        // run, else the live job. Parameters: queue, id, queue, id, queue, id.
        this.runById = """
            SELECT * FROM (
                SELECT %1$s, 1 AS source FROM %2$s r LEFT JOIN %3$s d ON d.id = r.id WHERE r.queue = ? AND r.id = ?
                UNION ALL
                SELECT d.id, d.queue, CASE WHEN d.reason = 'discarded' THEN 'discarded' ELSE 'dead' END,
                       CASE WHEN d.reason = 'discarded' THEN NULL ELSE d.reason END, d.attempts, d.max_attempts, d.priority,
                       d.created_at, d.first_claimed_at, d.died_at, d.worker_id, d.payload, d.content_type, NULL::bytea,
                       NULL::text, d.last_error, d.unique_key, d.headers::text, d.purge_after, 2
                FROM %3$s d WHERE d.queue = ? AND d.id = ?
                UNION ALL
                SELECT j.id, j.queue, CASE j.state WHEN 'processing' THEN 'running' ELSE j.state END, NULL::text,
                       j.attempts, j.max_attempts, j.priority, j.created_at, j.first_claimed_at, NULL::timestamptz,
                       j.worker_id, j.payload, j.content_type, NULL::bytea, NULL::text, j.last_error, j.unique_key,
                       j.headers::text, NULL::timestamptz, 3
                FROM %4$s j WHERE j.queue = ? AND j.id = ?) u
            ORDER BY source LIMIT 1
            """.formatted(runColumns, run, dead, job);
        // Whether the queue holds an ended trace of the job (a record or a dead job). Parameters: queue, id x2.
        this.endedById = "SELECT EXISTS (SELECT 1 FROM " + run + " WHERE queue = ? AND id = ?)"
                + " OR EXISTS (SELECT 1 FROM " + dead + " WHERE queue = ? AND id = ?)";
        // A job's trail in sequence order. Parameters: queue, job id.
        this.events = "SELECT job_id, seq, type, at, attempt, worker_id, detail, next_due FROM " + event
                + " WHERE job_id = ? AND queue = ? ORDER BY seq";
        // A page of runs, newest first, after the cursor (finished_at µs, id; the first page passes NULLs). Every
        // filter is optional (NULL: off). Parameters: queue, statuses, statuses, since, until, unique key x2,
        // header name, header name, header value, cursor µs, cursor µs, cursor id, limit.
        this.runsPage = """
            SELECT %s FROM %s r LEFT JOIN %s d ON d.id = r.id
            WHERE r.queue = ?
              AND (?::text[] IS NULL OR r.status = ANY(?::text[]))
              AND r.finished_at >= coalesce(?::timestamptz, '-infinity')
              AND r.finished_at < coalesce(?::timestamptz, 'infinity')
              AND (?::text IS NULL OR r.unique_key = ?::text)
              AND (?::text IS NULL OR r.headers ->> ?::text = ?::text)
              AND (?::bigint IS NULL OR (r.finished_at, r.id)
                   < (timestamptz 'epoch' + ?::bigint * interval '1 microsecond', ?::bigint))
            ORDER BY r.finished_at DESC, r.id DESC
            LIMIT ?
            """.formatted(runColumns, run, dead);

        // Retention: records and events past their purge_after, a batch at a time. Parameters: batch.
        this.sweepRuns = """
            DELETE FROM %1$s WHERE ctid = ANY (ARRAY(
                SELECT ctid FROM %1$s WHERE purge_after <= now() LIMIT ? FOR UPDATE SKIP LOCKED))
            """.formatted(run);
        this.sweepEvents = """
            DELETE FROM %1$s WHERE ctid = ANY (ARRAY(
                SELECT ctid FROM %1$s WHERE purge_after <= now() LIMIT ? FOR UPDATE SKIP LOCKED))
            """.formatted(event);

        // A waiter's presence on a live job: its end then keeps a record and notifies. Parameters: queue, id.
        this.awaitMark = "UPDATE " + job + " SET awaited = true WHERE queue = ? AND id = ? RETURNING state";

        // A child's registration on its live parents, locked in id order (the order every multi-row lock of the
        // job family takes); the parent's end then sees dependents > 0 however the two interleave. Parameters:
        // parent ids. Returns the live parents.
        this.lockParents = """
            UPDATE %1$s j SET dependents = j.dependents + 1
            FROM (SELECT id FROM %1$s WHERE id = ANY(?::bigint[]) ORDER BY id FOR UPDATE) l
            WHERE j.id = l.id
            RETURNING j.id
            """.formatted(job);
        // How the parents that are not live ended: a record's status, else a dead job's. Parameters: ids x2.
        this.parentStatus = """
            SELECT r.id, r.status FROM %1$s r WHERE r.id = ANY(?::bigint[])
            UNION ALL
            SELECT d.id, CASE WHEN d.reason = 'discarded' THEN 'discarded' ELSE 'dead' END FROM %2$s d
            WHERE d.id = ANY(?::bigint[]) AND NOT EXISTS (SELECT 1 FROM %1$s r WHERE r.id = d.id)
            """.formatted(run, dead);
        // Parameters: parent ids, child id.
        this.insertEdges = "INSERT INTO " + dependency + " (parent_id, child_id) SELECT DISTINCT p, ? FROM unnest(?::bigint[]) AS p";

        // Parents that ended (failed: dead, discarded or cancelled) release their waiting children: the edges go,
        // each child counts the parents that let it run (successes, and failures under 'run'), and a child whose
        // count reaches zero becomes pending (due at its own run_at, or now) and wakes its queue. Children locked in
        // id order. A child under 'cancel' with a failed parent is returned to be cancelled (the caller's next
        // statement, which also handles its own children). Parameters: parent ids, failed flags. Returns one row: the
        // queues woken, and the children to cancel with the failed parent of each (NULL arrays when none).
        this.releaseChildren = """
            WITH e AS (
                DELETE FROM %3$s d USING unnest(?::bigint[], ?::boolean[]) AS p(id, failed)
                WHERE d.parent_id = p.id RETURNING d.child_id, p.failed, p.id AS parent_id),
            locked AS MATERIALIZED (
                SELECT c.id, c.on_parent_failure FROM %1$s c
                WHERE c.id IN (SELECT child_id FROM e) AND c.state = 'waiting' ORDER BY c.id FOR UPDATE),
            tally AS (
                SELECT e.child_id,
                       count(*) FILTER (WHERE NOT e.failed OR l.on_parent_failure = 'run') AS ok,
                       min(e.parent_id) FILTER (WHERE e.failed AND l.on_parent_failure = 'cancel') AS failed_parent
                FROM e JOIN locked l ON l.id = e.child_id GROUP BY e.child_id),
            freed AS (
                UPDATE %1$s c SET parents_left = GREATEST(c.parents_left - t.ok, 0),
                    state = CASE WHEN c.parents_left - t.ok <= 0 THEN 'pending' ELSE 'waiting' END,
                    run_at = CASE WHEN c.parents_left - t.ok <= 0 THEN GREATEST(c.run_at, now()) ELSE c.run_at END,
                    updated_at = now()
                FROM tally t WHERE c.id = t.child_id AND t.failed_parent IS NULL
                RETURNING c.queue, c.state),
            woke AS (SELECT pg_notify(%2$s, '%4$s' || queue) FROM (SELECT DISTINCT queue FROM freed WHERE state = 'pending') f)
            SELECT (SELECT count(*) FROM woke), array_agg(t.child_id ORDER BY t.child_id),
                   array_agg(t.failed_parent ORDER BY t.child_id)
            FROM tally t WHERE t.failed_parent IS NOT NULL
            """.formatted(job, channelLiteral, dependency, QueueSql.WAKE_PREFIX);

        // Waiting children whose parent failed end cancelled, the reason naming the parent; their edges as
        // children go. Returns those that have children of their own (the next round). Parameters: ids, reasons.
        this.cancelWaiting = """
            WITH c AS (SELECT * FROM unnest(?::bigint[], ?::text[]) AS c(id, why)),
            gone AS (
                DELETE FROM %1$s j USING c WHERE j.id = c.id AND j.state = 'waiting'
                RETURNING j.id, j.queue, j.content_type, j.headers, j.priority, j.attempts, j.max_attempts,
                          j.worker_id, j.first_claimed_at, j.created_at, j.last_error, j.unique_key, j.keep_runs_ns,
                          j.keep_events_ns, j.event_seq, j.awaited, j.cancel_requested, j.dependents,
                          'cancelled'::text AS status, c.why AS reason, NULL::bytea AS result, NULL::text AS result_ct),
            %2$s,
            edges AS (DELETE FROM %3$s WHERE child_id IN (SELECT id FROM gone))
            SELECT g.id, g.dependents > 0, (SELECT count(*) FROM gone_wake) FROM gone g
            """.formatted(job, recordEnd("gone"), dependency);
    }

    /**
     * The CTEs that record the end of every row of {@code src}: the run record (when the job keeps runs or a waiter is
     * present; kept for the job's keepRuns or {@link #AWAIT_GRACE}; a plain insert: a job has no record while it is
     * live, because a redrive deletes it), the event (jobs that keep runs), and the waiters' notification
     * ({@code r:<id>}, once per job). {@code src} has {@link #SOURCE_COLUMNS} plus {@code status}, {@code reason},
     * {@code result} and {@code result_ct}; the event's type is the status
     * ({@code succeeded}, {@code discarded}, {@code dead}, {@code cancelled}), its detail the reason or last error.
     * The end event names no worker: the attempt's {@code claimed} event and the record do (one copy fewer per job).
     */
    String recordEnd(String src) {
        long graceNs = AWAIT_GRACE.toNanos();
        return """
            %1$s_run AS (
                INSERT INTO %2$s (id, queue, status, reason, attempts, max_attempts, priority, enqueued_at, first_started_at,
                                  finished_at, worker_id, content_type, result, result_content_type, last_error,
                                  unique_key, headers, event_seq, purge_after)
                SELECT s.id, s.queue, s.status, s.reason, s.attempts, s.max_attempts, s.priority, s.created_at,
                       s.first_claimed_at, now(), s.worker_id, s.content_type, s.result, s.result_ct,
                       s.last_error, s.unique_key, s.headers, s.event_seq + 1,
                       now() + (coalesce(s.keep_runs_ns, %3$d) / 1000) * interval '1 microsecond'
                FROM %1$s s WHERE s.keep_runs_ns IS NOT NULL OR s.awaited),
            %4$s,
            %1$s_wake AS (SELECT pg_notify(%5$s, '%6$s' || s.id) FROM %1$s s WHERE s.awaited)""".formatted(
                src, run, graceNs, events(src, "s.event_seq + 1", "s.status", "s.attempts", "NULL::text",
                        "coalesce(s.reason, CASE WHEN s.status IN ('dead', 'discarded') THEN s.last_error END)", "NULL"),
                channelLiteral, END_PREFIX);
    }

    /**
     * The CTE {@code <src>_event}: one event per row of {@code src} that keeps runs ({@code keep_runs_ns},
     * {@code keep_events_ns}, {@code id}, {@code queue} columns), the other values as SQL expressions over {@code s}.
     */
    String events(String src, String seq, String type, String attempt, String worker, String detail, String nextDue) {
        return """
            %1$s_event AS (
                INSERT INTO %2$s (job_id, seq, queue, type, attempt, worker_id, detail, next_due, purge_after)
                SELECT s.id, %3$s, s.queue, %4$s, %5$s, %6$s, %7$s, %8$s,
                       now() + (coalesce(s.keep_events_ns, s.keep_runs_ns) / 1000) * interval '1 microsecond'
                FROM %1$s s WHERE s.keep_runs_ns IS NOT NULL)""".formatted(src, event, seq, type, attempt, worker, detail,
                nextDue);
    }

    /** The quoted name of {@code job_dependency}. */
    String dependencyTable() {
        return dependency;
    }

    /** The quoted name of {@code job_run}. */
    String run() {
        return run;
    }

    /** The schema's channel as an SQL literal. */
    String channelLiteral() {
        return channelLiteral;
    }
}
