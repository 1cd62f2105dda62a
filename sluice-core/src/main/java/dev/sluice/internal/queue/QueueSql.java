package dev.sluice.internal.queue;

import dev.sluice.internal.jdbc.Identifiers;
import dev.sluice.internal.notify.Channels;
import dev.sluice.internal.runtime.Backoff;

/**
 * The owner of the job tables — {@code job}, {@code job_dead}, and the run model's {@code job_run},
 * {@code job_event} and {@code job_dependency} — built once per schema: every statement on them is built here or in
 * the two rooms this class builds, {@link EndSql} (the ends of jobs and redrive) and {@link RunSql} (records, events,
 * dependencies, and the fragments that write them). Table names come from the constants and the validated schema;
 * every value is a bind parameter. They are run by {@link JobInserts}, {@link JobClaims}, {@link JobEnds},
 * {@link JobDependencies}, {@link JobMaintenance}, {@link JobListing} and {@link RunReads}; no other class holds SQL
 * on these tables.
 *
 * <p>Shapes worth knowing before changing anything here:
 * <ul>
 *   <li><b>Claim</b> walks the distinct priorities that have pending jobs (a recursive skip scan over
 *   {@code job_claim_idx}) and, per priority, takes the due jobs in {@code run_at, id} order with
 *   {@code FOR UPDATE SKIP LOCKED}. Each probe is an index range ({@code queue = ? AND priority = ? AND
 *   run_at <= now()}), so jobs delayed into the future are never scanned: the cost is O(batch +
 *   distinct priorities), not O(backlog).</li>
 *   <li><b>Handle operations</b> all carry the validity predicate {@link #VALID_CLAIM}: still processing,
 *   same claim token, claim not expired. A stale handle matches no row and changes nothing. The batched
 *   forms (worker acks, heartbeats, releases) join the presented (id, token) pairs on the primary key with
 *   the same predicate, the state implied by the token (see {@link #ackBatch}).</li>
 *   <li><b>Wake-ups</b>: every statement that makes a job claimable sends one {@code pg_notify} with the
 *   payload {@code q:<queue>} on the schema's channel (PostgreSQL folds repeats within a transaction) — except
 *   an enqueue in a transaction of Sluice's own, whose wake-up is sent after its commit (the enqueue statements
 *   take the channel as NULL then; {@link Channels#WAKE_IN_TRANSACTION}, {@code WakeSender}).
 *   Stream notifications on the same channel carry a numeric stream id, so the two never collide.</li>
 * </ul>
 */
final class QueueSql {
    static final String JOB = "job";
    static final String JOB_DEAD = "job_dead";
    /** The identity sequence of {@code job.id} (PostgreSQL's default name for it). */
    static final String JOB_ID_SEQUENCE = "job_id_seq";
    /** The notification payload prefix of queue wake-ups. */
    static final String WAKE_PREFIX = "q:";

    /** A processing row under this claim (releases): the first two placeholders are the job id and the claim token. */
    private static final String VALID_CLAIM =
            "id = ? AND claim_token = ? AND state = 'processing' AND claim_expires_at > now()";

    /**
     * The retry wait in seconds after a failed attempt, before jitter: {@code Backoff.queueWait} in SQL
     * (base × 2^(attempt-1), capped), computed from the row because one statement settles or rescues many
     * rows. {@code BackoffAgreementTest} checks it against the Java definition for attempts 1 to 30.
     */
    static final String BACKOFF_WAIT_SECONDS = "(LEAST(j.backoff_base_ns * power(" + Backoff.QUEUE_MULTIPLIER + "::float8,"
            + " LEAST(GREATEST(j.attempts - 1, 0), 60)), j.backoff_max_ns::float8) / 1e9)";
    /** That wait as an interval, minus up to {@code Backoff.QUEUE_JITTER} (10 %) jitter. */
    static final String BACKOFF = "make_interval(secs => " + BACKOFF_WAIT_SECONDS + " * (1 - " + Backoff.QUEUE_JITTER
            + " * random()))";

    /** Columns read into a {@code JobInfo}. */
    static final String INFO_COLUMNS = "id, queue, state, priority, run_at, expires_at, attempts, max_attempts,"
            + " visibility_timeout_ns, backoff_base_ns, backoff_max_ns, dead_letter_retention_ns, worker_id, claimed_at,"
            + " claim_expires_at, last_error, unique_key, headers::text, content_type, octet_length(payload), created_at, updated_at";

    /** Columns read into a {@code DeadJob}. */
    static final String DEAD_COLUMNS = "id, queue, reason, last_error, attempts, max_attempts, priority, unique_key,"
            + " headers::text, worker_id, octet_length(payload), created_at, died_at, purge_after";

    final String job;
    final String jobDead;
    /** The statements of the run model's tables and fragments. */
    final RunSql runs;
    /** The statements that end jobs. */
    final EndSql ends;

    final String enqueue;
    final String enqueuePlain;
    final String enqueuePlainKept;
    final String enqueueChild;
    final String existingIds;
    final String claim;
    final String nextDue;
    final String ackBatch;
    final String heartbeat;
    final String release;
    final String releaseBatch;
    final String sweepDead;
    final String purgeDeadIds;
    final String purgeDeadBatch;
    final String jobById;
    final String pendingFirst;
    final String pendingAfter;
    final String waitingFirst;
    final String waitingAfter;
    final String processingFirst;
    final String processingAfter;
    final String deadPage;
    final String stats;
    final String queues;

    QueueSql(String schema) {
        String q = Identifiers.quote(schema);
        this.job = q + "." + JOB;
        this.jobDead = q + "." + JOB_DEAD;
        String sequence = q + "." + JOB_ID_SEQUENCE;
        this.runs = new RunSql(q, Channels.forSchema(schema));
        this.ends = new EndSql(job, jobDead, runs);
        String priorities = priorities(job);

        // Ids are drawn in input order before the insert so that every input row keeps its id whether it
        // was written or lost to a live unique key; the caller reads the live holder's id for the latter.
        this.enqueue = """
            WITH x AS MATERIALIZED (SELECT %4$s AS notified),
            input AS MATERIALIZED (
                SELECT v.ord, nextval('%2$s') AS id, v.p, v.ct, v.h, v.pr, v.delay_us, v.run_at_us, v.exp_us, v.uk
                FROM x, unnest(?::bytea[], ?::text[], ?::text[], ?::int[], ?::bigint[], ?::bigint[], ?::bigint[], ?::text[])
                     WITH ORDINALITY AS v(p, ct, h, pr, delay_us, run_at_us, exp_us, uk, ord)
                ORDER BY v.ord),
            written AS (
                INSERT INTO %1$s (id, queue, payload, content_type, headers, priority, run_at, expires_at,
                                  visibility_timeout_ns, max_attempts, backoff_base_ns, backoff_max_ns,
                                  dead_letter_retention_ns, unique_key, keep_runs_ns, keep_events_ns, event_seq)
                SELECT i.id, ?, i.p, i.ct, i.h::jsonb, i.pr,
                       CASE WHEN i.delay_us IS NOT NULL THEN now() + i.delay_us * interval '1 microsecond'
                            WHEN i.run_at_us IS NOT NULL THEN timestamptz 'epoch' + i.run_at_us * interval '1 microsecond'
                            ELSE now() END,
                       timestamptz 'epoch' + i.exp_us * interval '1 microsecond',
                       ?, ?, ?, ?, ?, i.uk, ?::bigint, ?::bigint, ?::int
                FROM input i ORDER BY i.ord
                ON CONFLICT (queue, unique_key) WHERE unique_key IS NOT NULL DO NOTHING
                RETURNING id, queue, keep_runs_ns, keep_events_ns),
            %3$s
            SELECT i.id, i.id IN (SELECT id FROM written) AS written, i.uk FROM input i ORDER BY i.ord
            """.formatted(job, sequence, runs.events("written", "1", "'enqueued'", "NULL::int", "NULL::text", "NULL::text",
                "NULL::timestamptz"), Channels.WAKE_IN_TRANSACTION);

        // The bulk path for jobs without unique keys (nothing can be lost to a conflict): no ON CONFLICT,
        // no materialized input. The ids come back in input order: nextval runs as the function scan
        // emits the array's elements, so within one statement they ascend in input order (the caller sorts).
        // Parameters: channel, wake key, queue, content type, the five stamps, then the payloads and five
        // arrays of options, each NULL when no job of the batch sets that option (unnest pads with NULLs).
        // The stamps include the run model's (keep runs, keep events, the first event's sequence: 1 when runs are
        // kept, else 0); a batch that keeps runs takes the variant that also writes the enqueued events.
        String plainInsert = """
            INSERT INTO %1$s (queue, content_type, visibility_timeout_ns, max_attempts, backoff_base_ns, backoff_max_ns,
                              dead_letter_retention_ns, keep_runs_ns, keep_events_ns, event_seq, payload, headers, priority,
                              run_at, expires_at)
            SELECT q.queue, q.ct, q.vt, q.ma, q.bb, q.bm, q.dr, q.kr, q.ke, q.seq, v.p, v.h::jsonb, coalesce(v.pr, 0),
                   CASE WHEN v.delay_us IS NOT NULL THEN now() + v.delay_us * interval '1 microsecond'
                        WHEN v.run_at_us IS NOT NULL THEN timestamptz 'epoch' + v.run_at_us * interval '1 microsecond'
                        ELSE now() END,
                   timestamptz 'epoch' + v.exp_us * interval '1 microsecond'
            FROM x, (SELECT ?::text, ?::text, ?::bigint, ?::int, ?::bigint, ?::bigint, ?::bigint, ?::bigint, ?::bigint, ?::int)
                     AS q(queue, ct, vt, ma, bb, bm, dr, kr, ke, seq),
                 unnest(?::bytea[], ?::text[], ?::int[], ?::bigint[], ?::bigint[], ?::bigint[])
                     AS v(p, h, pr, delay_us, run_at_us, exp_us)
            """.formatted(job);
        this.enqueuePlain = "WITH x AS MATERIALIZED (SELECT " + Channels.WAKE_IN_TRANSACTION + " AS notified)\n" + plainInsert + "RETURNING id\n";
        this.enqueuePlainKept = "WITH x AS MATERIALIZED (SELECT " + Channels.WAKE_IN_TRANSACTION + " AS notified),\nins AS (\n" + plainInsert
                + "RETURNING id, queue, keep_runs_ns, keep_events_ns),\n" + runs.events("ins", "1", "'enqueued'", "NULL::int",
                "NULL::text", "NULL::text", "NULL::timestamptz") + "\nSELECT id FROM ins\n";

        // A child of parents (EnqueueOptions.after), one at a time inside the dependency transaction: waiting while
        // parents are live (pending when none is), its policy for a parent's failure, the enqueued event. A unique
        // key a live job holds writes nothing (no row returned). Parameters: channel, wake key, queue, payload,
        // content type, headers, priority, delay µs x2, run_at µs x2, expires µs, the five stamps, keep runs, keep
        // events, first event sequence, unique key, state, parents left, policy.
        this.enqueueChild = """
            WITH x AS MATERIALIZED (SELECT ?::text AS channel, ?::text AS wake),
            ins AS (
                INSERT INTO %1$s (queue, payload, content_type, headers, priority, run_at, expires_at, visibility_timeout_ns,
                                  max_attempts, backoff_base_ns, backoff_max_ns, dead_letter_retention_ns, keep_runs_ns,
                                  keep_events_ns, event_seq, unique_key, state, parents_left, on_parent_failure)
                SELECT ?, ?, ?, ?::jsonb, ?,
                       CASE WHEN ?::bigint IS NOT NULL THEN now() + ?::bigint * interval '1 microsecond'
                            WHEN ?::bigint IS NOT NULL THEN timestamptz 'epoch' + ?::bigint * interval '1 microsecond'
                            ELSE now() END,
                       timestamptz 'epoch' + ?::bigint * interval '1 microsecond',
                       ?, ?, ?, ?, ?, ?::bigint, ?::bigint, ?, ?::text, ?, ?, ?
                ON CONFLICT (queue, unique_key) WHERE unique_key IS NOT NULL DO NOTHING
                RETURNING id, queue, keep_runs_ns, keep_events_ns, state),
            %2$s,
            woke AS (SELECT pg_notify(x.channel, x.wake) FROM x, ins WHERE ins.state = 'pending')
            SELECT i.id, (SELECT count(*) FROM woke) FROM ins i
            """.formatted(job, runs.events("ins", "1", "'enqueued'", "NULL::int", "NULL::text", "NULL::text",
                "NULL::timestamptz"));

        // The live holders of unique keys an enqueue lost to (read by a new statement, which sees the holders
        // that committed while the insert waited). Parameters: queue, keys. Returns (unique key, id).
        this.existingIds = "SELECT unique_key, id FROM " + job + " WHERE queue = ? AND unique_key = ANY(?::text[])";

        // One token per claim statement (drawn by the caller): a row's claim is (id, token), and a per-row
        // gen_random_uuid() costs a strong-random call per row; the token is not read back (the caller has it).
        // The bounds (ClaimHints: a worker's lower bound of run_at per priority; empty arrays for none) make
        // each probe start past the index entries of jobs drained since the last VACUUM. The picked rows are
        // updated by ctid: they are locked by this statement, so their ctid cannot change, and a TID fetch
        // spares a primary-key descent per row.
        // Parameters: queue x2, bound priorities, bound run_at (epoch µs), queue, n, n, worker id, token.
        this.claim = """
            WITH RECURSIVE %2$s,
            bound(p, from_at) AS (
                SELECT b.p, timestamptz 'epoch' + b.us * interval '1 microsecond' FROM unnest(?::int[], ?::bigint[]) AS b(p, us)),
            async AS MATERIALIZED (SELECT set_config('synchronous_commit', 'off', true) AS s),
            picked AS MATERIALIZED (
                SELECT c.row_id FROM async, prio LEFT JOIN bound ON bound.p = prio.p CROSS JOIN LATERAL (
                    SELECT j.ctid AS row_id, j.id, j.run_at FROM %1$s j
                    WHERE j.queue = ? AND j.state = 'pending' AND j.priority = prio.p AND j.run_at <= now()
                      AND j.run_at >= coalesce(bound.from_at, '-infinity')
                      AND (j.expires_at IS NULL OR j.expires_at > now())
                    ORDER BY j.run_at, j.id
                    LIMIT ? FOR UPDATE SKIP LOCKED) c
                WHERE prio.p IS NOT NULL
                ORDER BY prio.p DESC, c.run_at, c.id
                LIMIT ?),
            claimed AS (
                UPDATE %1$s j SET state = 'processing', worker_id = ?, claimed_at = now(),
                    claim_expires_at = now() + (j.visibility_timeout_ns / 1000) * interval '1 microsecond',
                    claim_token = ?, attempts = j.attempts + 1, first_claimed_at = coalesce(j.first_claimed_at, now()),
                    event_seq = j.event_seq + 1, updated_at = now()
                WHERE j.ctid = ANY (ARRAY(SELECT row_id FROM picked))
                RETURNING j.id, j.payload, j.content_type, j.headers::text AS headers, j.priority, %3$s AS run_at_us,
                          j.attempts, j.max_attempts, j.visibility_timeout_ns, %4$s AS expires_us, j.unique_key,
                          %5$s AS created_us, j.keep_runs_ns, j.queue, j.keep_events_ns, j.event_seq, j.worker_id),
            %6$s
            SELECT id, payload, content_type, headers, priority, run_at_us, attempts, max_attempts, visibility_timeout_ns,
                   NULL AS token, expires_us, unique_key, created_us, keep_runs_ns IS NOT NULL
            FROM claimed
            """.formatted(job, priorities, micros("j.run_at"), micros("j.claim_expires_at"), micros("j.created_at"),
                runs.events("claimed", "s.event_seq", "'claimed'", "s.attempts", "s.worker_id", "NULL::text",
                        "NULL::timestamptz"));

        // An idle worker's probe: the earliest run_at among the queue's claimable pending jobs (NULL when
        // none) and the database's now, with the claim's skip scan. Parameters: queue x3.
        this.nextDue = """
            WITH RECURSIVE %2$s
            SELECT (SELECT min(n.run_at) FROM prio CROSS JOIN LATERAL (
                        SELECT j.run_at FROM %1$s j
                        WHERE j.queue = ? AND j.state = 'pending' AND j.priority = prio.p
                          AND (j.expires_at IS NULL OR j.expires_at > now())
                        ORDER BY j.run_at, j.id LIMIT 1) n
                    WHERE prio.p IS NOT NULL),
                   now()
            """.formatted(job, priorities);

        // The completer's batched ack: one statement for many completions, each row deleted only while it
        // is still held under the presented token (a non-null token means processing: job_claim_iff_processing)
        // and its claim has not expired. No state = 'processing' term on purpose: it would let the planner
        // walk job_rescue_idx over every processing row (O(processing x batch) in the generic plan) instead
        // of one primary-key probe per id. Parameters: ids, tokens.
        // The tokens travel once each (a batch holds the acks of a few claims, each claim one token), the
        // pairs as (id, index into the tokens): a uuid array goes as text, an int array in binary. The reply
        // is one row: how many were deleted, and which only when not all were (the rare lost claim).
        // Only rows whose end needs nothing else: no run record, no waiter, no cancel request, no children; the
        // others are reported as not deleted, and the caller finishes them with EndSql.finishPlain.
        // Parameters: ids, token indexes (1-based), tokens, the number of acks.
        this.ackBatch = """
            WITH d AS (
                DELETE FROM %1$s j USING unnest(?::bigint[], ?::int[]) AS a(id, ti)
                WHERE j.id = a.id AND j.claim_token = (?::uuid[])[a.ti] AND j.claim_expires_at > now()
                  AND j.keep_runs_ns IS NULL AND NOT j.awaited AND NOT j.cancel_requested AND j.dependents = 0
                RETURNING j.id)
            SELECT count(*), CASE WHEN count(*) < ? THEN array_agg(id) END FROM d
            """.formatted(job);

        // The batched ack's predicate and plan (see ackBatch). Parameters: ids, tokens.
        this.heartbeat = """
            UPDATE %1$s j SET claim_expires_at = now() + (j.visibility_timeout_ns / 1000) * interval '1 microsecond',
                updated_at = now()
            FROM unnest(?::bigint[], ?::uuid[]) AS h(id, token)
            WHERE j.id = h.id AND j.claim_token = h.token AND j.claim_expires_at > now()
            RETURNING j.id, j.claim_expires_at, j.cancel_requested
            """.formatted(job);

        // A handle's release: pending again at its old place, the attempt not counted; wakes the queue. A job whose
        // cancel was requested is not given back: it stays claimed until the claim expires, and the rescue ends it
        // cancelled (both releases).
        // Parameters: id, token, channel. Returns (released, notified).
        this.release = """
            WITH back AS (
                UPDATE %1$s SET state = 'pending', claim_token = NULL, claim_expires_at = NULL,
                    attempts = GREATEST(attempts - 1, 0), updated_at = now()
                WHERE %2$s AND NOT cancel_requested
                RETURNING queue),
            woke AS (SELECT pg_notify(?, '%3$s' || queue) FROM back)
            SELECT (SELECT count(*) FROM back), (SELECT count(*) FROM woke)
            """.formatted(job, VALID_CLAIM, WAKE_PREFIX);

        // The worker's drain: many claims given back at once (attempts not counted); the predicate is the
        // batched ack's. Parameters: ids, tokens, channel.
        this.releaseBatch = """
            WITH back AS (
                UPDATE %1$s j SET state = 'pending', claim_token = NULL, claim_expires_at = NULL,
                    attempts = GREATEST(j.attempts - 1, 0), updated_at = now()
                FROM unnest(?::bigint[], ?::uuid[]) AS r(id, token)
                WHERE j.id = r.id AND j.claim_token = r.token AND j.claim_expires_at > now() AND NOT j.cancel_requested
                RETURNING j.queue),
            woke AS (SELECT pg_notify(?, '%2$s' || queue) FROM (SELECT DISTINCT queue FROM back) b)
            SELECT (SELECT count(*) FROM back), (SELECT count(*) FROM woke)
            """.formatted(job, WAKE_PREFIX);

        // The dead-letter retention: dead jobs past their purge_after are deleted, a batch at a time.
        // Parameters: batch.
        this.sweepDead = """
            DELETE FROM %1$s WHERE id = ANY (ARRAY(
                SELECT id FROM %1$s WHERE purge_after <= now() ORDER BY purge_after LIMIT ? FOR UPDATE SKIP LOCKED))
            """.formatted(jobDead);

        // An operator's purge of dead jobs: these ids (parameters: queue, ids; returns the deleted ids), or a batch of the queue's
        // dead jobs at a time, repeated until none is left (parameters: queue, batch).
        this.purgeDeadIds = "DELETE FROM " + jobDead + " WHERE queue = ? AND id = ANY(?::bigint[]) RETURNING id";
        this.purgeDeadBatch = "DELETE FROM " + jobDead + " WHERE id = ANY (ARRAY(SELECT id FROM " + jobDead
                + " WHERE queue = ? ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED))";

        // Operator reads (JobListing): one live job (parameters: queue, id); keyset pages of pending jobs in
        // claim order and of processing jobs by claim expiry, the first page (queue, limit) and the ones after
        // a cursor (pending: queue, priority x2, run_at µs, id, limit; processing: queue, claim expiry µs, id,
        // limit); a page of dead jobs by id (queue, after id, limit); the counts by state (queue x4).
        this.jobById = "SELECT " + INFO_COLUMNS + " FROM " + job + " WHERE queue = ? AND id = ?";
        this.pendingFirst = "SELECT " + INFO_COLUMNS + " FROM " + job + " WHERE queue = ? AND state = 'pending'"
                + " ORDER BY priority DESC, run_at, id LIMIT ?";
        this.pendingAfter = "SELECT " + INFO_COLUMNS + " FROM " + job + " WHERE queue = ? AND state = 'pending'"
                + " AND (priority < ? OR (priority = ? AND (run_at, id) > (timestamptz 'epoch' + ? * interval '1 microsecond', ?)))"
                + " ORDER BY priority DESC, run_at, id LIMIT ?";
        this.waitingFirst = "SELECT " + INFO_COLUMNS + " FROM " + job + " WHERE queue = ? AND state = 'waiting'"
                + " ORDER BY id LIMIT ?";
        this.waitingAfter = "SELECT " + INFO_COLUMNS + " FROM " + job + " WHERE queue = ? AND state = 'waiting' AND id > ?"
                + " ORDER BY id LIMIT ?";
        this.processingFirst = "SELECT " + INFO_COLUMNS + " FROM " + job + " WHERE queue = ? AND state = 'processing'"
                + " ORDER BY claim_expires_at, id LIMIT ?";
        this.processingAfter = "SELECT " + INFO_COLUMNS + " FROM " + job + " WHERE queue = ? AND state = 'processing'"
                + " AND (claim_expires_at, id) > (timestamptz 'epoch' + ? * interval '1 microsecond', ?)"
                + " ORDER BY claim_expires_at, id LIMIT ?";
        this.deadPage = "SELECT " + DEAD_COLUMNS + " FROM " + jobDead + " WHERE queue = ? AND id > ? ORDER BY id LIMIT ?";
        this.stats = """
            SELECT (SELECT count(*) FROM %1$s WHERE queue = ? AND state = 'pending'),
                   (SELECT count(*) FROM %1$s WHERE queue = ? AND state = 'pending' AND run_at > now()),
                   (SELECT count(*) FROM %1$s WHERE queue = ? AND state = 'processing'),
                   (SELECT count(*) FROM %2$s WHERE queue = ?),
                   (SELECT count(*) FROM %1$s WHERE queue = ? AND state = 'waiting')
            """.formatted(job, jobDead);

        // Every queue with live or dead jobs and its counts: one pass over each table, grouped by queue.
        // No parameters.
        this.queues = """
            SELECT queue, sum(pending)::bigint, sum(scheduled)::bigint, sum(processing)::bigint, sum(dead)::bigint,
                   sum(waiting)::bigint
            FROM (SELECT queue,
                         count(*) FILTER (WHERE state = 'pending') AS pending,
                         count(*) FILTER (WHERE state = 'pending' AND run_at > now()) AS scheduled,
                         count(*) FILTER (WHERE state = 'processing') AS processing,
                         0 AS dead,
                         count(*) FILTER (WHERE state = 'waiting') AS waiting
                  FROM %1$s GROUP BY queue
                  UNION ALL
                  SELECT queue, 0, 0, 0, count(*), 0 FROM %2$s GROUP BY queue) AS counts
            GROUP BY queue
            ORDER BY queue
            """.formatted(job, jobDead);
    }

    /**
     * A timestamptz as integer microseconds since the epoch, exact: {@code date_part} is float8, whose error
     * at today's epoch seconds is under 0.13 µs, and rounding the product restores the stored microsecond.
     * Reading it costs a long, not pgjdbc's calendar arithmetic (a visible share of a busy worker's CPU).
     */
    static String micros(String column) {
        return "round(date_part('epoch', " + column + ") * 1e6)::int8";
    }

    /**
     * The recursive CTE {@code prio(p)}: the distinct priorities of the queue's pending jobs, lowest first,
     * found with one index probe each (a skip scan). Ends with a NULL row. Two placeholders: the queue, twice.
     * Lowest first on purpose: {@code job_claim_idx} holds priorities in descending order, so each probe
     * here scans backwards and lands on the newest entries of the next priority — live pending rows. The
     * other direction lands on a priority's oldest entries, which after a drain are the index entries of
     * claimed and deleted jobs (dead until VACUUM): measured, that probe walked every such leaf page (122
     * for 20,000 drained jobs) on every claim. Callers order by priority themselves.
     */
    private static String priorities(String job) {
        return """
            prio(p) AS (
                (SELECT priority FROM %1$s WHERE queue = ? AND state = 'pending' ORDER BY priority LIMIT 1)
              UNION ALL
                SELECT (SELECT j.priority FROM %1$s j WHERE j.queue = ? AND j.state = 'pending' AND j.priority > prio.p
                        ORDER BY j.priority LIMIT 1)
                FROM prio WHERE prio.p IS NOT NULL)""".formatted(job);
    }
}
