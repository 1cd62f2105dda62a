package dev.sluice.internal.shard;

import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import dev.sluice.internal.jdbc.Identifiers;
import dev.sluice.internal.jdbc.Sql;
import dev.sluice.internal.notify.Channels;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;

/**
 * The buckets of partitioned groups, in the caller's transaction: their declaration with the group, the stored
 * count, the operators' listing and the repartition. Stateless per schema; statements in {@link ShardSql}.
 *
 * <pre>{@code
 * Shards shards = new Shards("sluice");
 * shards.declare(c, groupId, 16);              // rows 0..15, unowned; again with 16: nothing; with 8: SLU-0120
 * for (BucketOwner b : shards.list(c, groupId)) { ... }
 * }</pre>
 */
public final class Shards {
    /** The most buckets a group may have (as {@code GroupConfig.partitions} allows). */
    public static final int MAX_COUNT = 1024;

    private final ShardSql sql;
    private final String channel;

    /** @param schema the installation schema, unquoted (already validated) */
    public Shards(String schema) {
        this.sql = ShardSql.of(Identifiers.quote(schema));
        this.channel = Channels.forSchema(schema);
    }

    /**
     * Creates the group's buckets {@code 0..count-1}, unowned; declaring the same count again changes nothing.
     *
     * @throws SluiceException {@link ErrorCode#PARTITIONS_MISMATCH} when the group has buckets of another count
     *                         (nothing changed); {@link ErrorCode#INVALID_ARGUMENT} for a count outside 1..1024
     */
    public void declare(Connection c, long groupId, int count) throws SQLException {
        checkCount(count);
        int stored = storedCount(c, groupId);
        if (stored != 0 && stored != count) {
            throw mismatch(groupId, stored, count);
        }
        if (stored == count) {
            return;
        }
        Sql.update(c, sql.declare, groupId, count, count);
        // Another declaration at the same moment with another count: its rows were committed while ours waited on
        // the conflict, and this statement sees them. The caller's transaction rolls back on the exception.
        int now = storedCount(c, groupId);
        if (now != count) {
            throw mismatch(groupId, now, count);
        }
    }

    /**
     * The group's stored number of buckets, 0 when it has none.
     *
     * @throws SluiceException {@link ErrorCode#PARTITIONS_MISMATCH} when its rows disagree (a race of two
     *                         declarations with different counts that both committed)
     */
    public int storedCount(Connection c, long groupId) throws SQLException {
        int[] r = Sql.first(c, sql.storedCount, rs -> new int[] {rs.getInt(1), rs.getInt(2), rs.getInt(3)}, groupId)
                .orElse(new int[] {0, 0, 0});
        if (r[2] == 0) {
            return 0;
        }
        if (r[0] != r[1] || r[2] != r[0]) {
            throw new SluiceException(ErrorCode.PARTITIONS_MISMATCH, "group " + groupId + " has " + r[2]
                    + " bucket rows with counts " + r[0] + " to " + r[1] + "; repartition it");
        }
        return r[0];
    }

    /** The group's buckets in order, with their owners (never a token); empty when the group is not partitioned. */
    public List<BucketOwner> list(Connection c, long groupId) throws SQLException {
        return Sql.list(c, sql.list, rs -> new BucketOwner(rs.getInt(1), rs.getInt(2), rs.getLong(3), rs.getString(4),
                instant(rs.getTimestamp(5)), instant(rs.getTimestamp(6)), instant(rs.getTimestamp(7))), groupId);
    }

    /**
     * Replaces the group's buckets with {@code count} new, unowned ones (an operator's action: the caller checks that
     * the group is paused, and resets the positions). Every member loses its buckets at its next heartbeat, which the
     * notification sent at commit runs at once.
     *
     * @throws SluiceException {@link ErrorCode#INVALID_ARGUMENT} for a count outside 1..1024
     */
    public void repartition(Connection c, long groupId, int count) throws SQLException {
        checkCount(count);
        Sql.update(c, sql.deleteGroup, groupId);
        Sql.update(c, sql.declare, groupId, count, count);
        Sql.execute(c, ShardSql.NOTIFY, channel);
    }

    private static void checkCount(int count) {
        if (count < 1 || count > MAX_COUNT) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "a partitioned group has 1 to " + MAX_COUNT
                    + " buckets (got " + count + ")");
        }
    }

    private static SluiceException mismatch(long groupId, int stored, int asked) {
        return new SluiceException(ErrorCode.PARTITIONS_MISMATCH, "group " + groupId + " has " + stored
                + " partitions; it cannot be declared with " + asked);
    }

    private static Instant instant(Timestamp t) {
        return t == null ? null : t.toInstant();
    }
}
