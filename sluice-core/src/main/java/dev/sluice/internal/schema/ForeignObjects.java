package dev.sluice.internal.schema;

import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * The objects of a schema that has no Sluice ledger yet: tables, views, sequences, functions and types.
 * A first install refuses such a schema unless forced, so Sluice never mixes its tables into an
 * application's schema (an empty, pre-created schema is fine: operators create schemas with grants).
 */
final class ForeignObjects {
    /** How many object names the error shows. */
    private static final int SHOWN = 3;

    /**
     * Relations (a composite type's row is relkind 'c'), functions and procedures, and stand-alone types;
     * array types and the row types of relations come with their owners, so they are not counted twice.
     * Parameters: the schema name three times. Returns the total and up to {@link #SHOWN} kinds and names.
     */
    private static final String LIST = """
            SELECT count(*) OVER (), kind, name FROM (
              SELECT CASE c.relkind WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view' WHEN 'S' THEN 'sequence'
                       WHEN 'c' THEN 'type' WHEN 'f' THEN 'foreign table' ELSE 'table' END AS kind, c.relname::text AS name
                FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
               WHERE n.nspname = ? AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f', 'c')
              UNION ALL
              SELECT 'function', p.proname::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
               WHERE n.nspname = ?
              UNION ALL
              SELECT 'type', t.typname::text FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
               WHERE n.nspname = ? AND t.typtype IN ('b', 'd', 'e', 'r') AND t.typcategory <> 'A'
            ) o ORDER BY kind, name LIMIT 3""";

    private ForeignObjects() {
    }

    /** Raises {@link ErrorCode#SCHEMA_NOT_SLUICE} when the schema (which has no Sluice ledger) holds any object. */
    static void refuseUnlessEmpty(Connection c, String schema) throws SQLException {
        long total = 0;
        List<String> shown = new ArrayList<>(SHOWN);
        try (PreparedStatement ps = c.prepareStatement(LIST)) {
            ps.setString(1, schema);
            ps.setString(2, schema);
            ps.setString(3, schema);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    total = rs.getLong(1);
                    shown.add(rs.getString(2) + " " + printable(rs.getString(3)));
                }
            }
        }
        if (total > 0) {
            throw new SluiceException(ErrorCode.SCHEMA_NOT_SLUICE, "schema '" + schema + "' holds " + total
                    + " object(s) that Sluice did not create (" + String.join(", ", shown) + (total > shown.size() ? ", ..." : "")
                    + ") and no Sluice installation; use a schema of its own or force it (--force-schema,"
                    + " Sluice.builder().forceSchema(true))");
        }
    }

    /** An object name as shown in the error: control characters replaced, cut to 63 characters. */
    private static String printable(String name) {
        String cut = name.length() > 63 ? name.substring(0, 63) + "..." : name;
        return cut.replaceAll("\\p{Cntrl}", "?");
    }
}
