package dev.sluice.runs;

import dev.sluice.embedded.test.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/** SQL helpers for run tests: count rows of a job in a table, move the clock of a row. */
final class RunFixture {
    private final TestDatabase db;
    final String q;

    RunFixture(TestDatabase db) {
        this.db = db;
        this.q = "\"" + db.schema() + "\"";
    }

    /** Rows of job {@code id} in {@code table} (job, job_dead, job_run: by id; job_event: by job_id). */
    long count(String table, long id) {
        String column = table.equals("job_event") ? "job_id" : table.equals("job_dependency") ? "child_id" : "id";
        return scalar("SELECT count(*) FROM " + q + "." + table + " WHERE " + column + " = ?", id);
    }

    long scalar(String sql, Object... args) {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setObject(i + 1, args[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    void exec(String sql, Object... args) {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setObject(i + 1, args[i]);
            }
            ps.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    /** Makes a claim look expired. */
    void expireClaim(long id) {
        exec("UPDATE " + q + ".job SET claim_expires_at = now() - interval '1 millisecond' WHERE id = ?", id);
    }

    /** Makes a pending job due now. */
    void makeDue(long id) {
        exec("UPDATE " + q + ".job SET run_at = now() - interval '1 millisecond' WHERE id = ?", id);
    }
}
