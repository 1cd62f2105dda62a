package dev.sluice.internal.maint;

import dev.sluice.internal.schema.FamilyTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Creates {@code message_log_<id>} partitions ahead of the head, so producers never need DDL rights
 * and never fail for lack of a partition. Partition {@code k} holds ids {@code [k*size, (k+1)*size)}.
 */
public final class Partitions {
    /** How many partitions past the one holding the head are kept ready (at least). */
    public static final int AHEAD = 1;
    /**
     * At least this many ids are kept ready past the head, whatever the partition size: a transaction
     * that is already writing cannot see partitions attached after its first insert (it holds the
     * parent's lock, so it never reloads the partition map), so a long transaction needs room ahead.
     */
    public static final long AHEAD_IDS = 1024;

    private static final String LOCK = "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))";
    private static final String ATTACHED = """
            SELECT k.relname FROM pg_inherits i JOIN pg_class k ON k.oid = i.inhrelid
            WHERE i.inhparent = to_regclass(?)
            """;

    private static final String BOUNDS = """
            SELECT k.relname,
                   substring(pg_get_expr(k.relpartbound, k.oid) FROM 'FROM \\(''?(-?[0-9]+)''?\\)')::numeric AS low,
                   substring(pg_get_expr(k.relpartbound, k.oid) FROM 'TO \\(''?(-?[0-9]+)''?\\)')::numeric AS high,
                   i.inhdetachpending
            FROM pg_inherits i JOIN pg_class k ON k.oid = i.inhrelid WHERE i.inhparent = to_regclass(?)
            ORDER BY 2
            """;

    /**
     * Whether the current user may create (and attach) partitions of a log: CREATE on its schema and membership of the
     * log's owner (ATTACH PARTITION needs the parent's owner). Parameter: the log (qualified). No row: no such log.
     */
    private static final String MAY_CREATE = """
            SELECT has_schema_privilege(n.oid, 'CREATE') AND pg_has_role(r.relowner, 'USAGE')
            FROM pg_class r JOIN pg_namespace n ON n.oid = r.relnamespace WHERE r.oid = to_regclass(?)
            """;

    private Partitions() {
    }

    /**
     * Whether this database user may create partitions of the log ({@link #MAY_CREATE}); a least-privilege runtime
     * role may not, and callers that only keep partitions ahead as a courtesy then leave it to the migration role.
     */
    public static boolean mayCreate(Connection c, FamilyTables family) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(MAY_CREATE)) {
            ps.setString(1, family.messageLog());
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getBoolean(1);
            }
        }
    }

    /**
     * Ensures partitions exist from the one holding {@code headId} through {@link #AHEAD} more (filling a gap
     * down to the highest existing partition below, never lower). Idempotent.
     *
     * @return the number of partitions created
     */
    public static int ensureAhead(Connection c, FamilyTables family, long partitionSize, long headId) throws SQLException {
        return ensureThrough(c, family, partitionSize, headId, headId);
    }

    /**
     * Ensures partitions cover every id from {@code headId} up to {@code upToId}, plus {@link #AHEAD}
     * partitions beyond, with no holes down to the highest existing partition below the head's. Idempotent.
     *
     * @return the number of partitions created
     */
    public static int ensureThrough(Connection c, FamilyTables family, long partitionSize, long headId, long upToId)
            throws SQLException {
        long headIndex = Math.max(0, headId) / partitionSize;
        long lastIndex = Math.max(headIndex, Math.max(0, upToId) / partitionSize) + minimumAhead(partitionSize);
        return ensureRange(c, family, partitionSize, headIndex, lastIndex).size();
    }

    /**
     * Ensures partitions exist from the one holding {@code headId} through {@code partitionsAhead} more
     * (never fewer than the producers keep ahead), with no holes down to the highest existing partition below.
     * Idempotent; the caller holds {@link #lock}.
     *
     * @return the names (unqualified) of the partitions created, in id order
     */
    public static List<String> ensureAheadBy(Connection c, FamilyTables family, long partitionSize, long headId,
                                             int partitionsAhead) throws SQLException {
        long headIndex = Math.max(0, headId) / partitionSize;
        long lastIndex = headIndex + Math.max(partitionsAhead, minimumAhead(partitionSize));
        return ensureRange(c, family, partitionSize, headIndex, lastIndex);
    }

    /** Partitions kept past the head's: {@link #AHEAD}, and enough for {@link #AHEAD_IDS} ids. */
    static long minimumAhead(long partitionSize) {
        return Math.max(AHEAD, (AHEAD_IDS + partitionSize - 1) / partitionSize);
    }

    private static List<String> ensureRange(Connection c, FamilyTables family, long partitionSize, long headIndex,
                                            long lastIndex) throws SQLException {
        // One catalog read rather than one per partition: a long-lived stream has many.
        Set<String> existing = attached(c, family);
        List<String> created = new ArrayList<>();
        for (long k = firstToEnsure(family, existing, headIndex); k <= lastIndex; k++) {
            String name = family.messageLogPartition(k);
            String table = name.substring(name.lastIndexOf('.') + 1);
            if (!existing.contains(table) && create(c, family, partitionSize, k)) {
                created.add(table);
            }
        }
        return created;
    }

    /**
     * Where creation starts: at the highest existing partition at or below the head's (so a gap between the
     * partitions and a head that jumped ahead is filled), or at the head's when none exists below it. Never lower:
     * ids below the head are drawn already, and holes lower down are partitions retention dropped (docs/maintenance.md),
     * which must not come back.
     */
    private static long firstToEnsure(FamilyTables family, Set<String> existing, long headIndex) {
        String prefix = "message_log_" + family.streamId() + "_";
        long highestBelow = -1;
        for (String table : existing) {
            if (table.startsWith(prefix)) {
                try {
                    long k = Long.parseLong(table.substring(prefix.length()));
                    if (k <= headIndex && k > highestBelow) {
                        highestBelow = k;
                    }
                } catch (NumberFormatException e) {
                    // not one of ours
                }
            }
        }
        return highestBelow < 0 ? headIndex : highestBelow;
    }

    /**
     * Serializes partition creation for one stream across processes (a transaction-scoped advisory
     * lock): the producers' keepers, registration and extend-partitions never race a CREATE.
     */
    public static void lock(Connection c, String schema, long streamId) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(LOCK)) {
            ps.setString(1, "sluice.partitions:" + schema + ":" + streamId);
            ps.execute();
        }
    }

    /** The highest id the stream's sequence has handed out (0 before the first). */
    public static long head(Connection c, FamilyTables family) throws SQLException {
        try (Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT " + family.headExpression())) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** The names (unqualified) of the log's attached partitions. */
    private static Set<String> attached(Connection c, FamilyTables family) throws SQLException {
        Set<String> out = new HashSet<>();
        try (PreparedStatement ps = c.prepareStatement(ATTACHED)) {
            ps.setString(1, family.messageLog());
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(rs.getString(1));
                }
            }
        }
        return out;
    }

    /** The exclusive upper id bound of the highest partition (0 when there is none). */
    public static long coveredUpTo(Connection c, FamilyTables family) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT max(substring(pg_get_expr(k.relpartbound, k.oid) FROM 'TO \\(''?(-?[0-9]+)''?\\)')::numeric)"
                        + " FROM pg_inherits i JOIN pg_class k ON k.oid = i.inhrelid WHERE i.inhparent = to_regclass(?)")) {
            ps.setString(1, family.messageLog());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                java.math.BigDecimal high = rs.getBigDecimal(1);
                return high == null ? 0 : high.longValue();
            }
        }
    }

    /**
     * One attached partition of the log: its table (unqualified), its id bounds {@code [low, high)}, and whether a
     * concurrent detach of it is pending (queries already leave it out; retention completes the detach).
     */
    public record Bound(String table, long low, long high, boolean detachPending) {
    }

    /**
     * The log's attached partitions with their bounds, from the catalog (so this works whatever partitions
     * retention has dropped), in id order. An unbounded upper end ({@code MAXVALUE}) reads as {@link Long#MAX_VALUE}.
     */
    public static List<Bound> bounds(Connection c, FamilyTables family) throws SQLException {
        List<Bound> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(BOUNDS)) {
            ps.setString(1, family.messageLog());
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    java.math.BigDecimal low = rs.getBigDecimal(2);
                    java.math.BigDecimal high = rs.getBigDecimal(3);
                    if (low != null) {
                        out.add(new Bound(rs.getString(1), low.longValue(), high == null ? Long.MAX_VALUE : high.longValue(),
                                rs.getBoolean(4)));
                    }
                }
            }
        }
        return out;
    }

    private static boolean create(Connection c, FamilyTables family, long size, long index) throws SQLException {
        long low = Math.multiplyExact(index, size);
        String high;
        try {
            high = Long.toString(Math.addExact(low, size));
        } catch (ArithmeticException e) {
            high = "MAXVALUE";
        }
        String partition = family.messageLogPartition(index);
        try (PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?) IS NULL")) {
            ps.setString(1, partition);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                if (!rs.getBoolean(1)) {
                    return false;
                }
            }
        }
        // Create then ATTACH (SHARE UPDATE EXCLUSIVE on the parent) rather than CREATE ... PARTITION OF
        // (ACCESS EXCLUSIVE), so producers inserting into the log are not blocked. The temporary CHECK
        // lets ATTACH skip its validation scan.
        String check = partition.substring(partition.lastIndexOf('.') + 1) + "_bounds";
        try (Statement s = c.createStatement()) {
            s.execute("CREATE TABLE " + partition + " (LIKE " + family.messageLog() + " INCLUDING DEFAULTS INCLUDING CONSTRAINTS)");
            if (!high.equals("MAXVALUE")) {
                s.execute("ALTER TABLE " + partition + " ADD CONSTRAINT " + check + " CHECK (id >= " + low + " AND id < " + high + ")");
            }
            s.execute("ALTER TABLE " + family.messageLog() + " ATTACH PARTITION " + partition
                    + " FOR VALUES FROM (" + low + ") TO (" + high + ")");
            if (!high.equals("MAXVALUE")) {
                s.execute("ALTER TABLE " + partition + " DROP CONSTRAINT " + check);
            }
        }
        return true;
    }

    private static final String SCHEMA_COVERAGE = """
            SELECT p.relname,
                   max(substring(pg_get_expr(k.relpartbound, k.oid) FROM 'TO \\(''?(-?[0-9]+)''?\\)')::numeric)
            FROM pg_class p JOIN pg_namespace n ON n.oid = p.relnamespace
                 JOIN pg_inherits i ON i.inhparent = p.oid JOIN pg_class k ON k.oid = i.inhrelid
            WHERE n.nspname = ? AND p.relkind = 'p' AND p.relname ~ '^message_log_[0-9]+$'
            GROUP BY p.relname
            """;

    /**
     * {@link #coveredUpTo} of every stream log of the schema in one catalog read: stream id → the exclusive upper id
     * bound of its highest partition. {@code schema} is the unquoted schema name.
     */
    public static java.util.Map<Long, Long> coverageOfSchema(Connection c, String schema) throws SQLException {
        java.util.Map<Long, Long> out = new java.util.HashMap<>();
        try (PreparedStatement ps = c.prepareStatement(SCHEMA_COVERAGE)) {
            ps.setString(1, schema);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    java.math.BigDecimal high = rs.getBigDecimal(2);
                    long id = Long.parseLong(rs.getString(1).substring("message_log_".length()));
                    out.put(id, high == null ? 0 : high.longValue());
                }
            }
        }
        return out;
    }

    /** The number of partitions the log has now. */
    public static int count(Connection c, FamilyTables family) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM pg_inherits WHERE inhparent = to_regclass(?) AND NOT inhdetachpending")) {
            ps.setString(1, family.messageLog());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }
}
