package dev.sluice.internal.manager;

import dev.sluice.SweepResult;
import dev.sluice.SweepStatus;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.jdbc.Sql;
import java.util.List;

/**
 * Owner of {@code maintenance_sweep}: the last run of each sweep, whoever ran it, written in one statement per
 * pass; read by {@code sluice maintenance status}.
 */
final class SweepLedger {
    private final Db db;
    /**
     * Records a pass. Parameters: run by, names, removed, durations (ns), how long before this statement each sweep
     * started (ns), errors (nullable). The sweeps ran one after the other, so each started where the previous ended.
     */
    private final String record;
    private final String list;

    SweepLedger(Db db, String q) {
        this.db = db;
        this.record = """
                INSERT INTO %1$s AS m (name, started_at, finished_at, removed, duration_ns, error, run_by, runs, failures)
                SELECT t.name, now() - make_interval(secs => t.ago_ns / 1e9),
                       now() - make_interval(secs => (t.ago_ns - t.duration_ns) / 1e9), t.removed, t.duration_ns, t.error, ?,
                       1, CASE WHEN t.error IS NULL THEN 0 ELSE 1 END
                FROM unnest(?::text[], ?::int8[], ?::int8[], ?::int8[], ?::text[]) AS t(name, removed, duration_ns, ago_ns, error)
                ON CONFLICT (name) DO UPDATE SET started_at = EXCLUDED.started_at, finished_at = EXCLUDED.finished_at,
                    removed = EXCLUDED.removed, duration_ns = EXCLUDED.duration_ns, error = EXCLUDED.error,
                    run_by = EXCLUDED.run_by, runs = m.runs + 1, failures = m.failures + EXCLUDED.failures
                """.formatted(q + ".maintenance_sweep");
        this.list = "SELECT name, finished_at, removed, duration_ns, error, run_by, runs, failures FROM " + q
                + ".maintenance_sweep ORDER BY name";
    }

    /** Records a pass whose sweeps ran one after the other, in order, and that took {@code passNanos} until now. */
    void record(List<SweepResult> results, long passNanos, String runBy) {
        int n = results.size();
        String[] names = new String[n];
        Long[] removed = new Long[n];
        Long[] nanos = new Long[n];
        Long[] ago = new Long[n];
        String[] errors = new String[n];
        long startedAfter = 0; // each sweep's start, counted from the pass's start
        for (int i = 0; i < n; i++) {
            SweepResult r = results.get(i);
            names[i] = r.name();
            removed[i] = Math.max(0, r.removed());
            nanos[i] = r.took().toNanos();
            ago[i] = Math.max(nanos[i], passNanos - startedAfter);
            startedAfter += nanos[i];
            errors[i] = r.error();
        }
        db.autoCommit("record maintenance sweeps", c -> Sql.update(c, record, runBy, Sql.array("text", names),
                Sql.array("int8", removed), Sql.array("int8", nanos), Sql.array("int8", ago), Sql.array("text", errors)));
    }

    List<SweepStatus> list() {
        return db.read("read maintenance sweeps", c -> Sql.list(c, list, rs -> new SweepStatus(rs.getString(1),
                rs.getTimestamp(2).toInstant(), rs.getLong(3), java.time.Duration.ofNanos(rs.getLong(4)), rs.getString(5),
                rs.getString(6), rs.getLong(7), rs.getLong(8))));
    }
}
