package dev.sluice.bench.lab;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;

/**
 * The queue engine's checker, in SQL over the ledger ({@link QueueEngine}'s tables) and Sluice's job tables: every
 * job a producer was told it enqueued ends acked (a {@code succeeded} run record), dead (a dead job or a dead or
 * discarded run record) or is still live with its state as the reason; none is lost, none is acked by two claims,
 * none exists that no producer attempted; every plan ends as planned; every completion wait saw the job's real end.
 *
 * <p>It first builds two unlogged tables: {@code q_enq}, each tag's last enqueue row (an attempt row alone means the
 * producer never learned the outcome), and {@code q_jobs}, every job of the lab queue in Sluice's tables with its end —
 * the live row wins over the run record, which wins over the dead job (a live job with an ended record or a dead row
 * is {@code inconsistent}). A ledger batch whose commit reply was lost is written twice, so calls, acks and waits
 * are counted by their identity (call id; waiter, tag and start), never by rows.
 */
final class QueueChecker {
    private static final String S = "\"" + Ledger.SLUICE_SCHEMA + "\"";
    private static final String Q = "'" + QueueEngine.QUEUE + "'";

    /** The catalogue tables (rebuilt by every check). */
    static final String CATALOGUE = """
        DROP TABLE IF EXISTS sluice_lab.q_enq, sluice_lab.q_jobs, sluice_lab.q_acks;
        CREATE UNLOGGED TABLE sluice_lab.q_enq AS
            SELECT DISTINCT ON (tag) tag, plan, unique_key, outcome, job_id
            FROM sluice_lab.queue_enqueue ORDER BY tag, (outcome = 'attempt'), ended_at DESC NULLS LAST;
        CREATE INDEX ON sluice_lab.q_enq (job_id);
        CREATE INDEX ON sluice_lab.q_enq (tag);
        CREATE UNLOGGED TABLE sluice_lab.q_jobs AS
            SELECT id, (array_agg(tag ORDER BY pri))[1] AS tag, (array_agg(plan ORDER BY pri))[1] AS plan,
                   (array_agg(unique_key ORDER BY pri))[1] AS unique_key, (array_agg(kind ORDER BY pri))[1] AS kind,
                   (array_agg(detail ORDER BY pri))[1] AS detail, (array_agg(result ORDER BY pri))[1] AS result,
                   bool_or(pri = 1) AND bool_or(pri > 1) AS inconsistent
            FROM (
                SELECT id, headers->>'lab-tag' AS tag, headers->>'lab-plan' AS plan, unique_key, 'live' AS kind,
                       state AS detail, NULL::text AS result, 1 AS pri FROM %1$s.job WHERE queue = %2$s
                UNION ALL
                SELECT id, headers->>'lab-tag', headers->>'lab-plan', unique_key,
                       CASE status WHEN 'succeeded' THEN 'acked' WHEN 'cancelled' THEN 'cancelled' ELSE 'dead' END,
                       coalesce(reason, status), convert_from(result, 'UTF8'), 2 FROM %1$s.job_run WHERE queue = %2$s
                UNION ALL
                SELECT id, headers->>'lab-tag', headers->>'lab-plan', unique_key, 'dead', reason, NULL, 3
                FROM %1$s.job_dead WHERE queue = %2$s
            ) x GROUP BY id;
        CREATE INDEX ON sluice_lab.q_jobs (id);
        CREATE UNLOGGED TABLE sluice_lab.q_acks AS
            SELECT job_id, count(DISTINCT call_id) AS acks, count(DISTINCT claim_token) AS claims
            FROM sluice_lab.queue_ack WHERE returned GROUP BY job_id;
        ANALYZE sluice_lab.q_enq;
        ANALYZE sluice_lab.q_jobs;
        """.formatted(S, Q);

    /** The figures, in the section's order: name, then the query (one bigint). */
    private static final String[][] FIGURES = {
        {"enqueued", "SELECT count(DISTINCT job_id) FROM sluice_lab.q_enq WHERE outcome = 'ok'"},
        {"deduplicated", """
            SELECT count(*) FROM sluice_lab.q_enq e JOIN sluice_lab.q_jobs j ON j.id = e.job_id
            WHERE e.outcome = 'ok' AND j.tag IS DISTINCT FROM e.tag AND e.unique_key IS NOT NULL AND j.unique_key = e.unique_key"""},
        {"rejected", "SELECT count(*) FROM sluice_lab.q_enq WHERE outcome = 'rejected'"},
        {"unknown_committed", """
            SELECT count(*) FROM sluice_lab.q_enq e WHERE e.outcome IN ('unknown', 'attempt')
            AND EXISTS (SELECT 1 FROM sluice_lab.q_jobs j WHERE j.tag = e.tag)"""},
        {"unknown_absent", """
            SELECT count(*) FROM sluice_lab.q_enq e WHERE e.outcome IN ('unknown', 'attempt')
            AND NOT EXISTS (SELECT 1 FROM sluice_lab.q_jobs j WHERE j.tag = e.tag)"""},
        {"acked", "SELECT count(*) FROM sluice_lab.q_jobs WHERE kind = 'acked'"},
        {"dead", "SELECT count(*) FROM sluice_lab.q_jobs WHERE kind = 'dead'"},
        {"dead_by_faults", """
            SELECT count(*) FROM sluice_lab.q_jobs WHERE kind = 'dead' AND detail IN ('claim_expired', 'expired')
            AND plan <> 'terminal'"""},
        {"pending", "SELECT count(*) FROM sluice_lab.q_jobs WHERE kind = 'live'"},
        {"revived", "SELECT count(DISTINCT job_id) FROM sluice_lab.queue_revive WHERE outcome = 'revived'"},
        {"handler_calls", "SELECT count(DISTINCT call_id) FROM sluice_lab.queue_call WHERE phase = 'end'"},
        {"waits", "SELECT count(DISTINCT (waiter, tag, started_at)) FROM sluice_lab.queue_wait"},
        {"wait_timeouts", "SELECT count(DISTINCT (waiter, tag, started_at)) FROM sluice_lab.queue_wait WHERE outcome <> 'ended'"},
        // What must be zero.
        {"lost", """
            SELECT count(DISTINCT e.job_id) FROM sluice_lab.q_enq e WHERE e.outcome = 'ok'
            AND NOT EXISTS (SELECT 1 FROM sluice_lab.q_jobs j WHERE j.id = e.job_id)"""},
        {"lost_acks", """
            SELECT count(*) FROM sluice_lab.q_acks a JOIN sluice_lab.queue_ack k ON k.job_id = a.job_id AND k.returned
            LEFT JOIN sluice_lab.q_jobs j ON j.id = a.job_id
            WHERE j.id IS NULL OR j.kind <> CASE k.kind WHEN 'complete' THEN 'acked' ELSE 'dead' END"""},
        {"double_acks", "SELECT count(*) FROM sluice_lab.q_acks WHERE acks > 1"},
        {"unexpected", """
            SELECT count(*) FROM sluice_lab.q_jobs j
            WHERE NOT EXISTS (SELECT 1 FROM sluice_lab.q_enq e WHERE e.tag = j.tag)
               OR EXISTS (SELECT 1 FROM sluice_lab.q_enq e WHERE e.job_id = j.id AND e.outcome = 'ok'
                          AND e.tag IS DISTINCT FROM j.tag AND e.unique_key IS DISTINCT FROM j.unique_key)
               OR EXISTS (SELECT 1 FROM sluice_lab.q_enq e WHERE e.tag = j.tag AND e.outcome = 'rejected')"""},
        {"inconsistent", "SELECT count(*) FROM sluice_lab.q_jobs WHERE inconsistent"},
        {"plan_mismatches", """
            SELECT count(*) FROM sluice_lab.q_jobs WHERE
                (plan = 'terminal' AND kind <> 'live' AND NOT (kind = 'dead' AND detail = 'discarded'))
             OR (plan IN ('ok', 'transient', 'hang') AND kind = 'dead' AND detail IN ('failed', 'discarded'))
             OR (plan = 'exhaust' AND kind = 'acked'
                 AND NOT EXISTS (SELECT 1 FROM sluice_lab.queue_revive r WHERE r.job_id = q_jobs.id))
             OR (kind = 'acked' AND result IS DISTINCT FROM '"done:' || tag || '"' AND result IS DISTINCT FROM 'done:' || tag)
             OR kind = 'cancelled'"""},
        {"wait_mismatches", """
            SELECT count(*) FROM sluice_lab.queue_wait w LEFT JOIN sluice_lab.q_jobs j ON j.id = w.job_id
            WHERE w.outcome = 'ended' AND (j.id IS NULL OR j.kind = 'live'
               OR w.status <> CASE j.kind WHEN 'acked' THEN 'succeeded' WHEN 'cancelled' THEN 'cancelled'
                                 ELSE CASE WHEN j.detail = 'discarded' THEN 'discarded' ELSE 'dead' END END
               OR (j.kind = 'acked' AND w.result IS DISTINCT FROM j.result))"""},
    };

    /** The figures that must be zero for a pass. */
    static final List<String> MUST_BE_ZERO = List.of("lost", "lost_acks", "double_acks", "unexpected", "inconsistent",
            "plan_mismatches", "wait_mismatches");

    private QueueChecker() {
    }

    static LabEngine.Section check(Connection c, boolean drained) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(CATALOGUE);
        }
        return LabEngine.Section.of(c, FIGURES, MUST_BE_ZERO, Map.of("drained", drained));
    }
}
