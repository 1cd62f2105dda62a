package dev.sluice.internal.consume;

import dev.sluice.BindingPattern;
import dev.sluice.DeadLetter;
import dev.sluice.ErrorCode;
import dev.sluice.GroupConfig;
import dev.sluice.GroupInfo;
import dev.sluice.Page;
import dev.sluice.SluiceException;
import dev.sluice.StartPosition;
import dev.sluice.StreamInfo;
import dev.sluice.internal.catalog.Names;
import dev.sluice.internal.catalog.StreamCatalog;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.schema.FamilyTables;
import dev.sluice.internal.text.Echo;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Consumer groups of streams: registration (sparse config, logged, bindings applied forward), reads
 * with cursor arithmetic, and the operator actions (dead letters, redrive, purge, rewind).
 */
public final class GroupCatalog {
    private final Db db;
    private final StreamCatalog streams;
    private final String schema;
    private final String q;
    private final String clientId;

    public GroupCatalog(Db db, StreamCatalog streams, String schema, String clientId) {
        this.db = db;
        this.streams = streams;
        this.schema = schema;
        this.q = streams.quotedSchema();
        this.clientId = clientId;
    }

    /** A resolved group: ids and tables, for the engine. */
    public record GroupRef(long streamId, String streamName, long groupId, String groupName, FamilyTables tables,
                           GroupConfig config, dev.sluice.DeliveryLogMode deliveryLogMode) {
    }

    FamilyTables tables(long streamId) {
        return new FamilyTables(q, streamId);
    }

    /** Creates the group (cursor at its start position) or replaces its declaration; logs it. */
    public GroupInfo register(String stream, String group, GroupConfig config) {
        Names.validate("stream", stream);
        Names.validate("consumer group", group);
        StreamInfo s = streams.requireUsable(stream);
        FamilyTables t = tables(s.id());
        // A group starting at the head starts at the fenced head, so it never skips a late commit below it.
        Long fencedHead = null;
        if (config.start() instanceof StartPosition.Head && get(stream, group).isEmpty()) {
            fencedHead = db.autoCommit("observe the head of '" + stream + "'", c -> {
                try {
                    long h = SnapshotFence.settledHead(c, t, Duration.ofSeconds(30));
                    if (h < 0) {
                        throw new SluiceException(ErrorCode.TRANSACTION_CONFLICT,
                                "older transactions stayed open for 30 s; cannot fix the head of '" + stream + "'");
                    }
                    return h;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new SluiceException(ErrorCode.TRANSACTION_CONFLICT, "interrupted while observing the head");
                }
            });
        }
        Long startHead = fencedHead;
        String doc = GroupDocs.toJson(config);
        db.transaction("register group '" + group + "' of '" + stream + "'", c -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))")) {
                ps.setString(1, "sluice.groups:" + schema + ":" + s.id());
                ps.execute();
            }
            Long groupId = null;
            String current = null;
            try (PreparedStatement ps = c.prepareStatement("SELECT id, config::text FROM " + q
                    + ".consumer_group_config WHERE stream_id = ? AND name = ? FOR UPDATE")) {
                ps.setLong(1, s.id());
                ps.setString(2, group);
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) {
                        groupId = rs.getLong(1);
                        current = rs.getString(2);
                    }
                }
            }
            long head = sequenceHead(c, t);
            String action;
            if (groupId == null) {
                groupId = insertGroup(c, s.id(), group, doc);
                long start = startPosition(c, t, config.start(), startHead);
                try (PreparedStatement ps = c.prepareStatement(ConsumeSql.of(t).ranges.startCursor)) {
                    ps.setLong(1, groupId);
                    ps.setLong(2, start);
                    ps.setLong(3, start);
                    ps.setLong(4, start);
                    ps.executeUpdate();
                }
                action = "created";
                installBindings(c, t, groupId, config.bindings(), 0);
            } else {
                action = GroupDocs.fromJson(current).equals(config) ? "unchanged" : "updated";
                try (PreparedStatement ps = c.prepareStatement("UPDATE " + q
                        + ".consumer_group_config SET config = ?::jsonb, updated_at = now() WHERE id = ?")) {
                    ps.setString(1, doc);
                    ps.setLong(2, groupId);
                    ps.executeUpdate();
                }
                installBindings(c, t, groupId, config.bindings(), head + 1);
            }
            logDeclaration(c, s.id(), groupId, group, doc, action);
            return null;
        });
        return require(stream, group);
    }

    private long insertGroup(Connection c, long streamId, String group, String doc) throws SQLException {
        long id;
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + q
                + ".consumer_group_config (stream_id, name, config) VALUES (?, ?, ?::jsonb) RETURNING id")) {
            ps.setLong(1, streamId);
            ps.setString(2, group);
            ps.setString(3, doc);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                id = rs.getLong(1);
            }
        }
        // The group's consumer worker: its declarations are snapshotted in worker_config_log.
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + q
                + ".worker_config (name, consumer_group_id, target_instances, metadata) VALUES ('consumer', ?, -1, ?::jsonb)")) {
            ps.setLong(1, id);
            ps.setString(2, doc);
            ps.executeUpdate();
        }
        return id;
    }

    private void logDeclaration(Connection c, long streamId, long groupId, String group, String doc, String action)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + q + ".worker_config SET metadata = ?::jsonb,"
                + " updated_at = now() WHERE consumer_group_id = ? AND name = 'consumer'")) {
            ps.setString(1, doc);
            ps.setLong(2, groupId);
            ps.executeUpdate();
        }
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + q + ".worker_config_log (worker_config_id, snapshot,"
                + " declared_by) SELECT id, jsonb_build_object('group', ?::text, 'action', ?::text, 'config', ?::jsonb), ? FROM "
                + q + ".worker_config WHERE consumer_group_id = ? AND name = 'consumer'")) {
            ps.setString(1, group);
            ps.setString(2, action);
            ps.setString(3, doc);
            ps.setString(4, clientId);
            ps.setLong(5, groupId);
            ps.executeUpdate();
        }
    }

    /** Applies a new binding set forward from {@code fromId}: removed patterns end there, new ones start there. */
    private void installBindings(Connection c, FamilyTables t, long groupId, List<String> patterns, long fromId) throws SQLException {
        ConsumeSql sql = ConsumeSql.of(t);
        Set<String> active = new HashSet<>();
        try (PreparedStatement ps = c.prepareStatement(sql.bindings.activePatterns)) {
            ps.setLong(1, groupId);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    active.add(rs.getString(1));
                }
            }
        }
        Set<String> wanted = new HashSet<>(patterns);
        List<String> removed = active.stream().filter(p -> !wanted.contains(p)).sorted().toList();
        List<String> added = wanted.stream().filter(p -> !active.contains(p)).sorted().toList();
        if (!removed.isEmpty()) {
            try (PreparedStatement ps = c.prepareStatement(sql.bindings.endPatterns)) {
                ps.setLong(1, fromId);
                ps.setLong(2, groupId);
                ps.setArray(3, c.createArrayOf("text", removed.toArray()));
                ps.executeUpdate();
            }
        }
        for (String p : added) {
            try (PreparedStatement ps = c.prepareStatement(sql.bindings.addPattern)) {
                ps.setLong(1, groupId);
                ps.setString(2, p);
                ps.setString(3, BindingPattern.toRegex(p));
                ps.setLong(4, fromId);
                ps.executeUpdate();
            }
        }
        try (PreparedStatement ps = c.prepareStatement(sql.bindings.logPatterns)) {
            ps.setLong(1, groupId);
            ps.setString(2, new com.fasterxml.jackson.databind.ObjectMapper().valueToTree(patterns.stream().sorted().toList()).toString());
            ps.setString(3, removed.isEmpty() && added.isEmpty() ? "unchanged" : "installed");
            ps.setLong(4, fromId);
            ps.setString(5, clientId);
            ps.executeUpdate();
        }
    }

    private static long sequenceHead(Connection c, FamilyTables t) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(ConsumeSql.of(t).messages.head); ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** The cursor value a new group starts at: every id above it will be delivered. */
    private static long startPosition(Connection c, FamilyTables t, StartPosition start, Long fencedHead) throws SQLException {
        if (start instanceof StartPosition.Head) {
            return fencedHead;
        }
        if (start instanceof StartPosition.AtId at) {
            return at.id() - 1;
        }
        String sql = start instanceof StartPosition.AtTime
                ? ConsumeSql.of(t).messages.firstAtTime
                : ConsumeSql.of(t).messages.first;
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            if (start instanceof StartPosition.AtTime at) {
                ps.setTimestamp(1, Timestamp.from(at.time()));
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                long min = rs.getLong(1);
                if (rs.wasNull()) {
                    // Nothing (yet) at or after the start: begin after everything drawn so far... for a time in
                    // the future, or an empty log, start from the beginning of what comes.
                    return start instanceof StartPosition.AtTime ? sequenceHeadSafe(c, t) : 0;
                }
                return min - 1;
            }
        }
    }

    private static long sequenceHeadSafe(Connection c, FamilyTables t) throws SQLException {
        // Committed rows at or after the time are none; in-flight producers draw ids above the visible
        // rows only after their xid, so the lowest id they can commit is above the committed maximum.
        try (PreparedStatement ps = c.prepareStatement(ConsumeSql.of(t).messages.lastCommitted);
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** The group with its progress, or empty. */
    public Optional<GroupInfo> get(String stream, String group) {
        Names.validate("stream", stream);
        Names.validate("consumer group", group);
        StreamInfo s = streams.requireUsable(stream);
        return list(s, group).stream().findFirst();
    }

    public GroupInfo require(String stream, String group) {
        return get(stream, group).orElseThrow(() -> new SluiceException(ErrorCode.GROUP_NOT_FOUND,
                "consumer group '" + group + "' of stream '" + stream + "' does not exist"));
    }

    /** Every group of the stream, by name. */
    public List<GroupInfo> list(String stream) {
        Names.validate("stream", stream);
        return list(streams.requireUsable(stream), null);
    }

    private List<GroupInfo> list(StreamInfo s, String only) {
        FamilyTables t = tables(s.id());
        return db.autoCommit("list groups of '" + s.name() + "'", c -> {
            long head = sequenceHead(c, t);
            List<GroupInfo> out = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement(ConsumeSql.of(t).ranges.groupList)) {
                ps.setLong(1, s.id());
                ps.setString(2, only);
                ps.setString(3, only);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        long committed = rs.getLong(6);
                        out.add(new GroupInfo(rs.getLong(1), s.name(), rs.getString(2), GroupDocs.fromJson(rs.getString(3)),
                                rs.getLong(5), committed, head, Math.max(0, head - committed), rs.getLong(7), rs.getLong(8),
                                rs.getLong(9), rs.getLong(10), rs.getLong(11), rs.getTimestamp(4).toInstant()));
                    }
                }
            }
            return out;
        });
    }

    /** The group resolved for consuming (config, tables, delivery-log mode). */
    public GroupRef resolve(String stream, String group) {
        StreamInfo s = streams.requireUsable(stream);
        GroupInfo g = require(stream, group);
        dev.sluice.DeliveryLogMode mode = g.config().deliveryLogMode() != null
                ? g.config().deliveryLogMode() : s.config().deliveryLogMode();
        return new GroupRef(s.id(), s.name(), g.id(), g.name(), tables(s.id()), g.config(), mode);
    }

    /** Dead letters of a group in message-id order, a page at a time (keyset, never OFFSET). */
    public Page<DeadLetter> deadLetters(String stream, String group, String cursor, int limit) {
        if (limit < 1 || limit > 1000) {
            throw new SluiceException(ErrorCode.INVALID_CONFIG, "limit must be between 1 and 1000 (got " + limit + ")");
        }
        GroupRef g = resolve(stream, group);
        long after = decodeCursor(cursor);
        return db.autoCommit("list dead letters", c -> {
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
        GroupRef g = resolve(stream, group);
        return db.transaction("redrive dead letters", c -> {
            ExceptionSql rows = ConsumeSql.of(g.tables()).exceptions;
            String sql = ids == null ? rows.redriveAll : rows.redriveIds;
            int n;
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setLong(1, g.groupId());
                if (ids != null) {
                    ps.setArray(2, c.createArrayOf("int8", ids.toArray()));
                }
                n = ps.executeUpdate();
            }
            if (ids != null && n != new HashSet<>(ids).size()) {
                throw new SluiceException(ErrorCode.MESSAGE_NOT_FOUND, "only " + n + " of the " + new HashSet<>(ids).size()
                        + " ids are dead letters of group '" + group + "'; nothing was redriven");
            }
            return n;
        });
    }

    /** Deletes dead letters (all of the group when {@code ids} is null); the messages stay in the log. */
    public int purge(String stream, String group, List<Long> ids) {
        GroupRef g = resolve(stream, group);
        return db.transaction("purge dead letters", c -> {
            ExceptionSql rows = ConsumeSql.of(g.tables()).exceptions;
            String sql = ids == null ? rows.purgeAll : rows.purgeIds;
            int n;
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setLong(1, g.groupId());
                if (ids != null) {
                    ps.setArray(2, c.createArrayOf("int8", ids.toArray()));
                }
                n = ps.executeUpdate();
            }
            if (ids != null && n != new HashSet<>(ids).size()) {
                throw new SluiceException(ErrorCode.MESSAGE_NOT_FOUND, "only " + n + " of the " + new HashSet<>(ids).size()
                        + " ids are dead letters of group '" + group + "'; nothing was purged");
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
        GroupRef g = resolve(stream, group);
        ConsumeSql sql = ConsumeSql.of(g.tables());
        db.transaction("rewind group '" + group + "'", c -> {
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
                        position = rs.wasNull() ? sequenceHeadSafe(c, g.tables()) : min - 1;
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
            return null;
        });
        return require(stream, group);
    }

    /** A reader's saved offset (0 when none). */
    public long readerOffset(String stream, String reader) {
        StreamInfo s = streams.requireUsable(stream);
        return db.autoCommit("read an offset", c -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT \"offset\" FROM " + q
                    + ".stream_reader_offset WHERE stream_id = ? AND name = ?")) {
                ps.setLong(1, s.id());
                ps.setString(2, reader);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? rs.getLong(1) : 0L;
                }
            }
        });
    }

    /** Saves a reader's offset monotonically; returns the stored value. */
    public long saveReaderOffset(String stream, String reader, long offset) {
        StreamInfo s = streams.requireUsable(stream);
        return db.transaction("save an offset", c -> {
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + q + ".stream_reader_offset AS r"
                    + " (stream_id, name, \"offset\") VALUES (?, ?, ?) ON CONFLICT (stream_id, name) DO UPDATE"
                    + " SET \"offset\" = GREATEST(r.\"offset\", EXCLUDED.\"offset\"), updated_at = now() RETURNING \"offset\"")) {
                ps.setLong(1, s.id());
                ps.setString(2, reader);
                ps.setLong(3, offset);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return rs.getLong(1);
                }
            }
        });
    }
}
