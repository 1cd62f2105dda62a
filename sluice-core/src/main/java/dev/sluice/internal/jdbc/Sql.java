package dev.sluice.internal.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * Binds parameters in order and maps rows, so statement owners do not repeat {@code PreparedStatement}
 * boilerplate. Values bind by their Java type: {@link Long}, {@link Integer}, {@link String}, {@link Boolean},
 * {@link Double}, {@link java.util.UUID}, {@code byte[]}, {@link Instant} (as {@code timestamptz}),
 * {@link Array} (a typed SQL array) and {@link Null} (a typed NULL). A bare {@code null} is refused: its type
 * would be left for the server to guess.
 *
 * <pre>{@code
 * List<Long> ids = Sql.list(c, sql.dueIds, rs -> rs.getLong(1), queue, batch);
 * int n = Sql.update(c, sql.release, id, Sql.array("text", keys));
 * }</pre>
 */
public final class Sql {
    private Sql() {
    }

    /** Maps the current row of a result set. */
    @FunctionalInterface
    public interface Row<T> {
        T map(ResultSet rs) throws SQLException;
    }

    /** A typed SQL array parameter; {@code type} is a PostgreSQL element type name ({@code int8}, {@code text}, …). */
    public record Array(String type, Object[] values) {
    }

    /** A typed NULL parameter ({@link java.sql.Types} constant). */
    public record Null(int sqlType) {
    }

    public static Array array(String type, Collection<?> values) {
        return new Array(type, values.toArray());
    }

    public static Array array(String type, Object[] values) {
        return new Array(type, values);
    }

    /** Binds {@code params} to {@code ps} from parameter 1 on; returns {@code ps}. */
    public static PreparedStatement bind(PreparedStatement ps, Object... params) throws SQLException {
        for (int i = 0; i < params.length; i++) {
            set(ps, i + 1, params[i]);
        }
        return ps;
    }

    private static void set(PreparedStatement ps, int i, Object v) throws SQLException {
        if (v == null) {
            throw new IllegalArgumentException("parameter " + i + " is a bare null; use Sql.Null with its SQL type");
        } else if (v instanceof Null n) {
            ps.setNull(i, n.sqlType());
        } else if (v instanceof Long l) {
            ps.setLong(i, l);
        } else if (v instanceof Integer n) {
            ps.setInt(i, n);
        } else if (v instanceof String s) {
            ps.setString(i, s);
        } else if (v instanceof Boolean b) {
            ps.setBoolean(i, b);
        } else if (v instanceof Double d) {
            ps.setDouble(i, d);
        } else if (v instanceof byte[] bytes) {
            ps.setBytes(i, bytes);
        } else if (v instanceof Instant t) {
            ps.setTimestamp(i, Timestamp.from(t));
        } else if (v instanceof Array a) {
            ps.setArray(i, ps.getConnection().createArrayOf(a.type(), a.values()));
        } else if (v instanceof java.util.UUID) {
            ps.setObject(i, v);
        } else {
            throw new IllegalArgumentException("parameter " + i + " has an unsupported type " + v.getClass().getName());
        }
    }

    /** Every row, mapped. */
    public static <T> List<T> list(Connection c, String sql, Row<T> row, Object... params) throws SQLException {
        try (PreparedStatement ps = bind(c.prepareStatement(sql), params); ResultSet rs = ps.executeQuery()) {
            List<T> out = new ArrayList<>();
            while (rs.next()) {
                out.add(row.map(rs));
            }
            return out;
        }
    }

    /** The first row, mapped, or empty when there is none. */
    public static <T> Optional<T> first(Connection c, String sql, Row<T> row, Object... params) throws SQLException {
        try (PreparedStatement ps = bind(c.prepareStatement(sql), params); ResultSet rs = ps.executeQuery()) {
            return rs.next() ? Optional.ofNullable(row.map(rs)) : Optional.empty();
        }
    }

    /** The first column of the first row as a long (0 when SQL NULL). */
    public static long scalar(Connection c, String sql, Object... params) throws SQLException {
        try (PreparedStatement ps = bind(c.prepareStatement(sql), params); ResultSet rs = ps.executeQuery()) {
            if (!rs.next()) {
                throw new SQLException("no row from a scalar query");
            }
            return rs.getLong(1);
        }
    }

    /** Runs a statement that returns no rows; returns the update count. */
    public static int update(Connection c, String sql, Object... params) throws SQLException {
        try (PreparedStatement ps = bind(c.prepareStatement(sql), params)) {
            return ps.executeUpdate();
        }
    }

    /** Runs a statement for its effect (any result is discarded), for example {@code SELECT pg_advisory_xact_lock(…)}. */
    public static void execute(Connection c, String sql, Object... params) throws SQLException {
        try (PreparedStatement ps = bind(c.prepareStatement(sql), params)) {
            ps.execute();
        }
    }
}
