package dev.sluice.bench.lab;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;

/**
 * The lock engine's checker, in SQL over {@link LockEngine}'s tables:
 * <ul>
 *   <li>{@code stale_accepted}: an accepted write whose token is lower than one the resource accepted before it (in
 *       the resource's own order) — a stale holder got through;</li>
 *   <li>{@code refused_while_held}: a write refused although the writer's lock had not expired when the resource
 *       checked it (by the database clock, after the row lock): a later token was handed out while the lock was
 *       still held;</li>
 *   <li>{@code token_reuse} and {@code token_regressions}: two acquisitions of a lock with one fencing token, or an
 *       acquisition whose token is not above that of every earlier acquisition of the lock (in the database's
 *       acquisition time, its expiry less its TTL);</li>
 *   <li>{@code resource_mismatches}: a lock whose resource row does not count exactly its recorded accepted writes,
 *       each with its own place in the order.</li>
 * </ul>
 * A missing acquisition row (a process killed before its batched ledger row was written) can only hide a violation,
 * never invent one; the write records are written in the writes' own transactions, so they are exact.
 */
final class LockChecker {
    /**
     * The acquisitions, each once: a batched ledger row whose commit reply was lost is written twice (same instance,
     * token, expiry and time), and must not count as a second acquisition.
     */
    private static final String ACQUISITIONS = "(SELECT DISTINCT instance, lock, token, ttl_ms, expires_at, at"
            + " FROM sluice_lab.lock_acquire)";

    private static final String[][] FIGURES = {
        {"acquisitions", "SELECT count(*) FROM " + ACQUISITIONS + " a"},
        {"renewals", "SELECT count(DISTINCT (instance, lock, token, at)) FROM sluice_lab.lock_renew WHERE renewed"},
        {"renewals_lost", "SELECT count(DISTINCT (instance, lock, token, at)) FROM sluice_lab.lock_renew WHERE NOT renewed"},
        {"writes", "SELECT count(*) FROM sluice_lab.lock_write"},
        {"accepted", "SELECT count(*) FROM sluice_lab.lock_write WHERE accepted"},
        {"refused", "SELECT count(*) FROM sluice_lab.lock_write WHERE NOT accepted"},
        {"stalled_writes", "SELECT count(*) FROM sluice_lab.lock_write WHERE stalled"},
        {"stalled_refused", "SELECT count(*) FROM sluice_lab.lock_write WHERE stalled AND NOT accepted"},
        {"holders", "SELECT count(DISTINCT instance) FROM sluice_lab.lock_acquire"},
        // What must be zero.
        {"stale_accepted", """
            SELECT count(*) FROM (
                SELECT token, max(token) OVER (PARTITION BY lock ORDER BY serial
                                               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before
                FROM sluice_lab.lock_write WHERE accepted) w
            WHERE token < before"""},
        {"refused_while_held", "SELECT count(*) FROM sluice_lab.lock_write WHERE NOT accepted AND checked_at < held_until"},
        {"token_reuse", """
            SELECT count(*) FROM (SELECT 1 FROM %s a GROUP BY lock, token HAVING count(*) > 1) d""".formatted(ACQUISITIONS)},
        {"token_regressions", """
            SELECT count(*) FROM (
                SELECT token, max(token) OVER (PARTITION BY lock ORDER BY expires_at - ttl_ms * interval '1 millisecond'
                                               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before
                FROM %s a) a
            WHERE token <= before""".formatted(ACQUISITIONS)},
        {"resource_mismatches", """
            SELECT count(*) FROM sluice_lab.lock_resource r
            LEFT JOIN (SELECT lock, count(*) AS n, count(DISTINCT serial) AS serials, max(serial) AS top
                       FROM sluice_lab.lock_write WHERE accepted GROUP BY lock) w ON w.lock = r.name
            WHERE r.writes <> coalesce(w.n, 0) OR coalesce(w.serials, 0) <> coalesce(w.n, 0)
               OR coalesce(w.top, 0) <> r.writes"""},
    };

    /** The figures that must be zero for a pass. */
    static final List<String> MUST_BE_ZERO = List.of("stale_accepted", "refused_while_held", "token_reuse",
            "token_regressions", "resource_mismatches");

    private LockChecker() {
    }

    static LabEngine.Section check(Connection c) throws SQLException {
        return LabEngine.Section.of(c, FIGURES, MUST_BE_ZERO, Map.of());
    }
}
