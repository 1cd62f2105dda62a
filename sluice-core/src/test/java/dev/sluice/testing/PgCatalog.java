package dev.sluice.testing;

import dev.sluice.embedded.test.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Reads tables, columns, constraints and indexes from PostgreSQL's catalogs, for schema assertions. */
public final class PgCatalog {
    private final TestDatabase db;
    private final String schema;

    public PgCatalog(TestDatabase db, String schema) {
        this.db = db;
        this.schema = schema;
    }

    /** Ordinary and partitioned tables of the schema (partitions included). */
    public List<String> tables() {
        return strings("SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                + " WHERE n.nspname = ? AND c.relkind IN ('r', 'p') ORDER BY 1", schema);
    }

    /** Column name → "type [not null]" of one table. */
    public Map<String, String> columns(String table) {
        Map<String, String> out = new LinkedHashMap<>();
        query("SELECT a.attname, format_type(a.atttypid, a.atttypmod) || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END"
                + " FROM pg_attribute a WHERE a.attrelid = to_regclass(?) AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
                rs -> out.put(rs.getString(1), rs.getString(2)), qualified(table));
        return out;
    }

    /** Constraint definitions (pg_get_constraintdef) of one table, by type: p, u, f, c. */
    public List<String> constraints(String table, char type) {
        return strings("SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = to_regclass(?) AND contype = ?"
                + " ORDER BY 1", qualified(table), String.valueOf(type));
    }

    /** Index definitions (pg_get_indexdef) of one table. */
    public List<String> indexes(String table) {
        return strings("SELECT pg_get_indexdef(indexrelid) FROM pg_index WHERE indrelid = to_regclass(?) ORDER BY 1",
                qualified(table));
    }

    /** The partitions of a partitioned table with their bounds. */
    public List<String> partitions(String table) {
        return strings("SELECT c.relname || ' ' || pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i"
                + " JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = to_regclass(?) ORDER BY c.relname", qualified(table));
    }

    /** Whether the table is partitioned by range on id. */
    public String partitionKey(String table) {
        List<String> keys = strings("SELECT pg_get_partkeydef(to_regclass(?))", qualified(table));
        return keys.isEmpty() ? null : keys.get(0);
    }

    public long count(String sql, Object... args) {
        List<String> r = strings(sql, args);
        return Long.parseLong(r.get(0));
    }

    private String qualified(String table) {
        return '"' + schema + "\"." + table;
    }

    public List<String> strings(String sql, Object... args) {
        List<String> out = new ArrayList<>();
        query(sql, rs -> out.add(rs.getString(1)), args);
        return out;
    }

    private interface Row {
        void accept(ResultSet rs) throws SQLException;
    }

    private void query(String sql, Row row, Object... args) {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setObject(i + 1, args[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    row.accept(rs);
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }
}
