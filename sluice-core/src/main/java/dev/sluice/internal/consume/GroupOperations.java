package dev.sluice.internal.consume;

import dev.sluice.DeadLetter;
import dev.sluice.ErrorCode;
import dev.sluice.GroupInfo;
import dev.sluice.Page;
import dev.sluice.SluiceException;
import dev.sluice.internal.consume.GroupRegistry.GroupRef;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.text.Echo;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;


/**
 * The operator actions on a consumer group: dead letters (page, redrive, purge) and rewind. Every write goes
 * through the stream's statement owners ({@link ExceptionSql}, {@link RangeSql}, {@link KeyLeaseSql}).
 */
public final class GroupOperations {
    private final Db db;
    private final GroupRegistry groups;
    private final String schema;

    /** The shared side of retention's lock on the stream, for the rewind's transaction. Parameter: the key. */
    static final String REWIND_LOCK = "SELECT pg_advisory_xact_lock_shared(hashtextextended(?, 0))";

    public GroupOperations(Db db, GroupRegistry groups, String schema) {
        this.db = db;
        this.groups = groups;
        this.schema = schema;
    }

    /** Dead letters of a group in message-id order, a page at a time (keyset, never OFFSET). */
    public Page<DeadLetter> deadLetters(String stream, String group, String cursor, int limit) {
        if (limit < 1 || limit > 1000) {
            throw new SluiceException(ErrorCode.INVALID_CONFIG, "limit must be between 1 and 1000 (got " + limit + ")");
        }
        GroupRef g = groups.resolve(stream, group);
        long after = decodeCursor(cursor);
        return db.read("list dead letters", c -> {
            List<DeadLetter> items = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement(ConsumeSql.of(g.tables()).exceptions.deadLetters)) {
                ps.setLong(1, g.groupId());
                ps.setLong(2, after);
                ps.setInt(3, limit + 1);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        Timestamp dead = rs.getTimestamp(8);
                        items.add(new DeadLetter(rs.getLong(1), rs.getString(2), rs.getInt(3), rs.getInt(4), rs.getString(5),
                                rs.getString(6), rs.getTimestamp(7).toInstant(), dead == null ? null : dead.toInstant()));
                    }
                }
            }
            String next = null;
            if (items.size() > limit) {
                items.remove(items.size() - 1);
                next = encodeCursor(items.get(items.size() - 1).messageId());
            }
            return new Page<>(List.copyOf(items), next);
        });
    }

    private static String encodeCursor(long id) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(("dl:" + id).getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    private static long decodeCursor(String cursor) {
        if (cursor == null || cursor.isEmpty()) {
            return 0;
        }
        try {
            String s = new String(Base64.getUrlDecoder().decode(cursor), java.nio.charset.StandardCharsets.UTF_8);
            if (!s.startsWith("dl:")) {
                throw new IllegalArgumentException();
            }
            return Long.parseLong(s.substring(3));
        } catch (RuntimeException e) {
            throw new SluiceException(ErrorCode.INVALID_CONFIG, "not a page cursor: '" + Echo.of(cursor) + "'");
        }
    }

    /**
     * Puts dead letters back to {@code ready} with attempts and delays reset. {@code ids} null means
     * every dead letter of the group. Returns how many were redriven; naming an id without a dead
     * letter is {@link ErrorCode#MESSAGE_NOT_FOUND} and changes nothing.
     */
    public int redrive(String stream, String group, List<Long> ids) {
        GroupRef g = groups.resolve(stream, group);
        ExceptionSql rows = ConsumeSql.of(g.tables()).exceptions;
        return onDead(g, ids, rows.redriveAll, rows.redriveIds, "redriven");
    }

    /** Deletes dead letters (all of the group when {@code ids} is null); the messages stay in the log. */
    public int purge(String stream, String group, List<Long> ids) {
        GroupRef g = groups.resolve(stream, group);
        ExceptionSql rows = ConsumeSql.of(g.tables()).exceptions;
        return onDead(g, ids, rows.purgeAll, rows.purgeIds, "purged");
    }

    /**
     * Runs an operator action on dead letters: every one of the group ({@code ids} null, {@code all}) or the named
     * ones ({@code some}), all or nothing — naming an id without a dead letter is {@link ErrorCode#MESSAGE_NOT_FOUND}.
     */
    private int onDead(GroupRef g, List<Long> ids, String all, String some, String done) {
        return db.transaction("dead letters " + done, c -> {
            int n;
            try (PreparedStatement ps = c.prepareStatement(ids == null ? all : some)) {
                ps.setLong(1, g.groupId());
                if (ids != null) {
                    ps.setArray(2, c.createArrayOf("int8", ids.toArray()));
                }
                n = ps.executeUpdate();
            }
            int named = ids == null ? n : new HashSet<>(ids).size();
            if (n != named) {
                throw new SluiceException(ErrorCode.MESSAGE_NOT_FOUND, "only " + n + " of the " + named
                        + " ids are dead letters of group '" + g.groupName() + "'; nothing was " + done);
            }
            return n;
        });
    }

    /**
     * Moves the group's cursor back (or forward) so delivery resumes after {@code toId - 1} (or from
     * the first message at or after {@code toTime}). Open ranges and non-dead exception rows are
     * dropped (they will be delivered again from the cursor). Refused while consumers of the group
     * are live, unless forced.
     */
    public GroupInfo rewind(String stream, String group, Long toId, Instant toTime, boolean force) {
        GroupRef g = groups.resolve(stream, group);
        ConsumeSql sql = ConsumeSql.of(g.tables());
        db.transaction("rewind group '" + group + "'", c -> {
            // First, before the log is read: retention re-checks and detaches a partition under this lock's
            // exclusive side, so a group never moves back into a partition it is detaching.
            try (PreparedStatement ps = c.prepareStatement(REWIND_LOCK)) {
                ps.setString(1, g.tables().retentionLockKey());
                ps.execute();
            }
            if (!force && Presence.anyLive(c, schema, g.groupId())) {
                throw new SluiceException(ErrorCode.INSTANCES_LIVE, "group '" + group + "' has live consumers; stop them or force");
            }
            long position;
            if (toId != null) {
                position = Math.max(0, toId - 1);
            } else {
                try (PreparedStatement ps = c.prepareStatement(sql.messages.firstAtTime)) {
                    ps.setTimestamp(1, Timestamp.from(toTime));
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        long min = rs.getLong(1);
                        position = rs.wasNull() ? GroupRegistry.sequenceHeadSafe(c, g.tables()) : min - 1;
                    }
                }
            }
            try (PreparedStatement ps = c.prepareStatement(RangeSql.LOCK_CURSOR)) {
                ps.setString(1, sql.ranges.cursorLockKey(g.groupId()));
                ps.execute();
            }
            try (PreparedStatement ps = c.prepareStatement(sql.ranges.deleteLeases)) {
                ps.setLong(1, g.groupId());
                ps.executeUpdate();
            }
            try (PreparedStatement ps = c.prepareStatement(sql.exceptions.deleteRowsAbove)) {
                ps.setLong(1, g.groupId());
                ps.setLong(2, position);
                ps.executeUpdate();
            }
            try (PreparedStatement ps = c.prepareStatement(sql.keys.deleteKeys)) {
                ps.setLong(1, g.groupId());
                ps.executeUpdate();
            }
            // settled_head may only move back with claimed: everything below the old settled head is resolved.
            try (PreparedStatement ps = c.prepareStatement(sql.ranges.rewindCursor)) {
                ps.setLong(1, g.groupId());
                ps.setLong(2, position);
                ps.setLong(3, position);
                ps.setLong(4, position);
                ps.executeUpdate();
            }
            if (g.config().partitioned()) {
                // Every bucket of a partitioned group goes to the position (its exception rows above it were dropped).
                try (PreparedStatement ps = c.prepareStatement(sql.partitions.setAll)) {
                    ps.setLong(1, position);
                    ps.setLong(2, g.groupId());
                    ps.setLong(3, g.groupId());
                    ps.executeUpdate();
                }
            }
            return null;
        });
        return groups.require(stream, group);
    }

    /** The positions of a partitioned group's buckets, in bucket order (empty for a group without partitions). */
    public List<long[]> bucketPositions(String stream, String group) {
        GroupRef g = groups.resolve(stream, group);
        if (!g.config().partitioned()) {
            return List.of();
        }
        return db.read("read bucket positions", c -> {
            List<long[]> out = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement(ConsumeSql.of(g.tables()).partitions.allPositions)) {
                ps.setLong(1, g.groupId());
                ps.setLong(2, g.groupId());
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        out.add(new long[] {rs.getInt(1), rs.getLong(2)});
                    }
                }
            }
            return out;
        });
    }

}
