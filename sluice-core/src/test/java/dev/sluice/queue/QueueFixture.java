package dev.sluice.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import dev.sluice.embedded.test.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;

/** SQL helpers for queue tests: read rows as the operator would with psql, and move the clock of a row. */
final class QueueFixture {
    private final TestDatabase db;
    final String q;

    QueueFixture(TestDatabase db) {
        this.db = db;
        this.q = "\"" + db.schema() + "\"";
    }

    long scalar(String sql, Object... args) {
        List<Map<String, Object>> rows = rows(sql, args);
        Object v = rows.isEmpty() ? null : rows.get(0).values().iterator().next();
        return v == null ? -1 : ((Number) v).longValue();
    }

    double seconds(String sql, Object... args) {
        Object v = rows(sql, args).get(0).values().iterator().next();
        return ((Number) v).doubleValue();
    }

    /** The job row with every column, or null. */
    Map<String, Object> job(long id) {
        List<Map<String, Object>> r = rows("SELECT * FROM " + q + ".job WHERE id = ?", id);
        return r.isEmpty() ? null : r.get(0);
    }

    /** The dead row with every column, or null. */
    Map<String, Object> dead(long id) {
        List<Map<String, Object>> r = rows("SELECT * FROM " + q + ".job_dead WHERE id = ?", id);
        return r.isEmpty() ? null : r.get(0);
    }

    /** Makes a claim look expired, as if its visibility timeout had passed without a heartbeat. */
    void expireClaim(long id) {
        exec("UPDATE " + q + ".job SET claim_expires_at = now() - interval '1 millisecond' WHERE id = ?", id);
    }

    /** Makes a pending job due now. */
    void makeDue(long id) {
        exec("UPDATE " + q + ".job SET run_at = now() - interval '1 millisecond' WHERE id = ?", id);
    }

    void exec(String sql, Object... args) {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps, args);
            ps.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    List<Map<String, Object>> rows(String sql, Object... args) {
        List<Map<String, Object>> out = new ArrayList<>();
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps, args);
            try (ResultSet rs = ps.executeQuery()) {
                ResultSetMetaData md = rs.getMetaData();
                while (rs.next()) {
                    Map<String, Object> row = new LinkedHashMap<>();
                    for (int i = 1; i <= md.getColumnCount(); i++) {
                        Object v = rs.getObject(i);
                        row.put(md.getColumnLabel(i), v instanceof byte[] b ? new String(b, java.nio.charset.StandardCharsets.UTF_8) : v);
                    }
                    out.add(row);
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
        return out;
    }

    private static void bind(PreparedStatement ps, Object... args) throws SQLException {
        for (int i = 0; i < args.length; i++) {
            ps.setObject(i + 1, args[i]);
        }
    }

    static void assertCode(ErrorCode code, ThrowingCallable call) {
        assertThatThrownBy(call).isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(code));
    }
}
