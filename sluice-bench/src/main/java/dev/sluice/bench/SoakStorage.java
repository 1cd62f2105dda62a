package dev.sluice.bench;

import dev.sluice.internal.schema.FamilyTables;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the soak's stream and schema occupy on disk, read from the catalog and the statistics views by the
 * benchmark's own connection:
 *
 * <ul>
 *   <li>the stream's tables: {@code pg_total_relation_size} (heap, indexes, TOAST) of every table of its family
 *       ({@link FamilyTables#tableNames()}) and of every partition of {@code message_log_<id>}
 *       ({@code pg_partition_tree});</li>
 *   <li>the control plane: the same of every other table of the schema;</li>
 *   <li>dead tuples ({@code pg_stat_user_tables.n_dead_tup}) of each family table (the log's partitions summed under
 *       {@code message_log_<id>}) and of the control plane together. The statistics are flushed by each backend
 *       about once a second, so they lag by that much;</li>
 *   <li>the log's partitions and its oldest id: retention drops whole partitions, so both move when it acts.</li>
 * </ul>
 *
 * A partition dropped while this runs has no size ({@code pg_total_relation_size} of a dropped relation is null)
 * and is not counted.
 */
final class SoakStorage {
    /** One reading. */
    record Reading(long streamBytes, long controlPlaneBytes, int partitions, Long oldestId, Map<String, Long> deadTuples) {
    }

    private static final String SIZES = """
            WITH family AS (
                SELECT relid AS oid FROM pg_partition_tree(?::regclass)
                UNION
                SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                 WHERE n.nspname = ? AND c.relname = ANY (?::text[])
            )
            SELECT coalesce(sum(pg_total_relation_size(c.oid)) FILTER (WHERE c.oid IN (SELECT oid FROM family)), 0)::bigint,
                   coalesce(sum(pg_total_relation_size(c.oid)) FILTER (WHERE c.oid NOT IN (SELECT oid FROM family)), 0)::bigint,
                   (SELECT count(*) FROM pg_partition_tree(?::regclass) WHERE isleaf)::int
              FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = ? AND c.relkind IN ('r', 'p')
            """;

    private static final String DEAD = """
            SELECT CASE WHEN s.relid IN (SELECT relid FROM pg_partition_tree(?::regclass)) THEN ?
                        WHEN s.relname = ANY (?::text[]) THEN s.relname
                        ELSE 'control_plane' END AS tbl,
                   sum(s.n_dead_tup)::bigint
              FROM pg_stat_user_tables s
             WHERE s.schemaname = ?
             GROUP BY 1
            """;

    private final Connection admin;
    private final String schema;
    private final String log;
    private final String logName;
    private final List<String> family;

    SoakStorage(Connection admin, String schema, long streamId) {
        this.admin = admin;
        this.schema = schema;
        FamilyTables tables = new FamilyTables(Bench.quote(schema), streamId);
        this.family = tables.tableNames();
        this.logName = "message_log_" + streamId;
        this.log = Bench.quote(schema) + "." + logName;
    }

    Reading read() throws SQLException {
        long stream;
        long control;
        int partitions;
        Array names = admin.createArrayOf("text", family.toArray());
        try (PreparedStatement ps = admin.prepareStatement(SIZES)) {
            ps.setString(1, log);
            ps.setString(2, schema);
            ps.setArray(3, names);
            ps.setString(4, log);
            ps.setString(5, schema);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                stream = rs.getLong(1);
                control = rs.getLong(2);
                partitions = rs.getInt(3);
            }
        }
        Map<String, Long> dead = new LinkedHashMap<>();
        for (String t : family) {
            dead.put(t, 0L);
        }
        dead.put("control_plane", 0L);
        try (PreparedStatement ps = admin.prepareStatement(DEAD)) {
            ps.setString(1, log);
            ps.setString(2, logName);
            ps.setArray(3, names);
            ps.setString(4, schema);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    dead.merge(rs.getString(1), rs.getLong(2), Long::sum);
                }
            }
        }
        Long oldest;
        try (PreparedStatement ps = admin.prepareStatement("SELECT min(id) FROM " + log);
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            long v = rs.getLong(1);
            oldest = rs.wasNull() ? null : v;
        }
        return new Reading(stream, control, partitions, oldest, dead);
    }
}
