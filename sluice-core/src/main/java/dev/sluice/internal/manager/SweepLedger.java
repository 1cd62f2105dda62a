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
    /** Records a pass. Parameters: names, removed, durations (ns), errors (nullable), run by. */
    private final String record;
    private final String list;

    SweepLedger(Db db, String q) {
        this.db = db;
        this.record = """
                INSERT INTO %1$s AS m (name, started_at, finished_at, removed, duration_ns, error, run_by, runs, failures)
                SELECT t.name, now() - make_interval(secs => t.duration_ns / 1e9), now(), t.removed, t.duration_ns, t.error, ?,
                       1, CASE WHEN t.error IS NULL THEN 0 ELSE 1 END
                FROM unnest(?::text[], ?::int8[], ?::int8[], ?::text[]) AS t(name, removed, duration_ns, error)
                ON CONFLICT (name) DO UPDATE SET started_at = EXCLUDED.started_at, finished_at = EXCLUDED.finished_at,
                    removed = EXCLUDED.removed, duration_ns = EXCLUDED.duration_ns, error = EXCLUDED.error,
                    run_by = EXCLUDED.run_by, runs = m.runs + 1, failures = m.failures + EXCLUDED.failures
                """.formatted(q + ".maintenance_sweep");
        this.list = "SELECT name, finished_at, removed, duration_ns, error, run_by, runs, failures FROM " + q
                + ".maintenance_sweep ORDER BY name";
    }

    void record(List<SweepResult> results, String runBy) {
        int n = results.size();
        String[] names = new String[n];
        Long[] removed = new Long[n];
        Long[] nanos = new Long[n];
        String[] errors = new String[n];
        for (int i = 0; i < n; i++) {
            SweepResult r = results.get(i);
            names[i] = r.name();
            removed[i] = Math.max(0, r.removed());
            nanos[i] = r.took().toNanos();
            errors[i] = r.error();
        }
        db.autoCommit("record maintenance sweeps", c -> Sql.update(c, record, runBy, Sql.array("text", names),
                Sql.array("int8", removed), Sql.array("int8", nanos), Sql.array("text", errors)));
    }

    List<SweepStatus> list() {
        return db.autoCommit("read maintenance sweeps", c -> Sql.list(c, list, rs -> new SweepStatus(rs.getString(1),
                rs.getTimestamp(2).toInstant(), rs.getLong(3), java.time.Duration.ofNanos(rs.getLong(4)), rs.getString(5),
                rs.getString(6), rs.getLong(7), rs.getLong(8))));
    }
}
