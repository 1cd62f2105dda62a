package dev.sluice.internal.consume;

import dev.sluice.BindingPattern;
import dev.sluice.ErrorCode;
import dev.sluice.GroupConfig;
import dev.sluice.GroupInfo;
import dev.sluice.SluiceException;
import dev.sluice.StartPosition;
import dev.sluice.StreamInfo;
import dev.sluice.internal.catalog.Names;
import dev.sluice.internal.catalog.StreamCatalog;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.schema.FamilyTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;


/**
 * Registration and lookup of a stream's consumer groups: creates a group (its first cursor version at the start
 * position) or replaces its declaration (sparse config, logged, bindings applied forward from the head), and
 * reads groups with their cursor arithmetic. Writes go through the owners: {@link GroupConfigSql} (group
 * config, worker, its log), {@link RangeSql} (the cursor), {@link BindingSql} (bindings).
 */
public final class GroupRegistry {
    private final Db db;
    private final StreamCatalog streams;
    private final String q;
    private final String clientId;
    private final GroupConfigSql sql;

    private final dev.sluice.internal.fleet.WorkerConfigs workers;
    private final Buckets buckets;
    private final String schema;

    /** The shard-lease side of a partitioned group's registration ({@code internal.shard}), in the caller's transaction. */
    public interface Buckets {
        /** Creates the group's bucket rows, or checks the stored count ({@code SLU-0120} when it differs). */
        void declare(Connection c, long groupId, int count) throws SQLException;

        /** Replaces the group's bucket rows with {@code count} unowned ones. */
        void repartition(Connection c, long groupId, int count) throws SQLException;
    }

    public GroupRegistry(Db db, StreamCatalog streams, String schema, String clientId,
                         dev.sluice.internal.fleet.WorkerConfigs workers, Buckets buckets) {
        this.db = db;
        this.schema = schema;
        this.buckets = buckets;
        this.workers = workers;
        this.streams = streams;
        this.q = streams.quotedSchema();
        this.clientId = clientId;
        this.sql = new GroupConfigSql(schema, q);
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
            fencedHead = db.read("observe the head of '" + stream + "'", c -> {
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
            try (PreparedStatement ps = c.prepareStatement(GroupConfigSql.LOCK_GROUPS)) {
                ps.setString(1, sql.groupsLockKey(s.id()));
                ps.execute();
            }
            Long groupId = null;
            String current = null;
            try (PreparedStatement ps = c.prepareStatement(sql.selectForUpdate)) {
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
                if (config.partitioned()) {
                    buckets.declare(c, groupId, config.partitions());
                    try (PreparedStatement ps = c.prepareStatement(ConsumeSql.of(t).partitions.startPositions)) {
                        ps.setLong(1, groupId);
                        ps.setLong(2, start);
                        ps.setInt(3, config.partitions());
                        ps.executeUpdate();
                    }
                }
                action = "created";
                installBindings(c, t, groupId, config.bindings(), 0);
            } else {
                GroupConfig stored = GroupDocs.fromJson(current);
                if (stored.partitions() != config.partitions()) {
                    throw new SluiceException(ErrorCode.PARTITIONS_MISMATCH, "group '" + group + "' of '" + stream + "' has "
                            + describe(stored.partitions()) + "; the declaration has " + describe(config.partitions())
                            + " (the count is fixed; change it with repartition while the group is paused)");
                }
                if (config.partitioned()) {
                    buckets.declare(c, groupId, config.partitions());
                }
                action = stored.equals(config) ? "unchanged" : "updated";
                try (PreparedStatement ps = c.prepareStatement(sql.updateConfig)) {
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

    /**
     * Changes a partitioned group's number of buckets, only while it is paused (its worker's target 0) and none of its
     * consumers runs: new bucket rows, and every new bucket at the lowest old position (nothing skipped; what lies
     * between that and an old bucket's position is delivered again). The declaration is logged as "repartitioned".
     */
    public GroupInfo repartition(String stream, String group, int partitions) {
        Names.validate("stream", stream);
        Names.validate("consumer group", group);
        if (partitions < 1 || partitions > GroupConfig.MAX_PARTITIONS) {
            throw new SluiceException(ErrorCode.INVALID_CONFIG,
                    "partitions must be between 1 and " + GroupConfig.MAX_PARTITIONS + " (got " + partitions + ")");
        }
        StreamInfo s = streams.requireUsable(stream);
        FamilyTables t = tables(s.id());
        PartitionSql psql = ConsumeSql.of(t).partitions;
        db.transaction("repartition group '" + group + "' of '" + stream + "'", c -> {
            try (PreparedStatement ps = c.prepareStatement(GroupConfigSql.LOCK_GROUPS)) {
                ps.setString(1, sql.groupsLockKey(s.id()));
                ps.execute();
            }
            long groupId;
            GroupConfig current;
            try (PreparedStatement ps = c.prepareStatement(sql.selectForUpdate)) {
                ps.setLong(1, s.id());
                ps.setString(2, group);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        throw new SluiceException(ErrorCode.GROUP_NOT_FOUND, "no group '" + group + "' on stream '" + stream + "'");
                    }
                    groupId = rs.getLong(1);
                    current = GroupDocs.fromJson(rs.getString(2));
                }
            }
            if (!current.partitioned()) {
                throw new SluiceException(ErrorCode.INVALID_CONFIG, "group '" + group + "' has no partitions to change");
            }
            if (workers.groupTarget(c, stream, group) != 0) {
                throw new SluiceException(ErrorCode.INSTANCES_LIVE, "pause group '" + group + "' first (sluice fleet set-target "
                        + "consumer:" + stream + "/" + group + " 0), then repartition");
            }
            if (Presence.anyLive(c, schema, groupId)) {
                throw new SluiceException(ErrorCode.INSTANCES_LIVE, "group '" + group + "' has running consumers; close them first");
            }
            long lowest;
            try (PreparedStatement ps = c.prepareStatement(psql.lowest)) {
                ps.setLong(1, groupId);
                ps.setLong(2, groupId);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    lowest = rs.getLong(1);
                }
            }
            buckets.repartition(c, groupId, partitions);
            try (PreparedStatement ps = c.prepareStatement(psql.deleteAll)) {
                ps.setLong(1, groupId);
                ps.executeUpdate();
            }
            try (PreparedStatement ps = c.prepareStatement(psql.startPositions)) {
                ps.setLong(1, groupId);
                ps.setLong(2, lowest);
                ps.setInt(3, partitions);
                ps.executeUpdate();
            }
            GroupConfig next = new GroupConfig(current.start(), current.bindings(), current.concurrency(), current.retry(),
                    current.deliveryLogMode(), current.acceptVersions(), current.maxRangeReclaims(), current.deadLetterRetention(),
                    partitions);
            String doc = GroupDocs.toJson(next);
            try (PreparedStatement ps = c.prepareStatement(sql.updateConfig)) {
                ps.setString(1, doc);
                ps.setLong(2, groupId);
                ps.executeUpdate();
            }
            logDeclaration(c, s.id(), groupId, group, doc, "repartitioned");
            return null;
        });
        return require(stream, group);
    }

    private static String describe(int partitions) {
        return partitions == 0 ? "no partitions" : partitions + " partitions";
    }

    private long insertGroup(Connection c, long streamId, String group, String doc) throws SQLException {
        long id;
        try (PreparedStatement ps = c.prepareStatement(sql.insertGroup)) {
            ps.setLong(1, streamId);
            ps.setString(2, group);
            ps.setString(3, doc);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                id = rs.getLong(1);
            }
        }
        // The group's consumer worker: its declarations are snapshotted in worker_config_log.
        workers.createGroupWorker(c, id, doc);
        return id;
    }

    private void logDeclaration(Connection c, long streamId, long groupId, String group, String doc, String action)
            throws SQLException {
        workers.declareGroupWorker(c, groupId, group, doc, action);
    }

    /** Applies a new binding set forward from {@code fromId}: removed patterns end there, new ones start there. */
    private void installBindings(Connection c, FamilyTables t, long groupId, List<String> patterns, long fromId) throws SQLException {
        BindingSql bindings = ConsumeSql.of(t).bindings;
        Set<String> active = new HashSet<>();
        try (PreparedStatement ps = c.prepareStatement(bindings.activePatterns)) {
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
            try (PreparedStatement ps = c.prepareStatement(bindings.endPatterns)) {
                ps.setLong(1, fromId);
                ps.setLong(2, groupId);
                ps.setArray(3, c.createArrayOf("text", removed.toArray()));
                ps.executeUpdate();
            }
        }
        for (String p : added) {
            try (PreparedStatement ps = c.prepareStatement(bindings.addPattern)) {
                ps.setLong(1, groupId);
                ps.setString(2, p);
                ps.setString(3, BindingPattern.toRegex(p));
                ps.setLong(4, fromId);
                ps.executeUpdate();
            }
        }
        try (PreparedStatement ps = c.prepareStatement(bindings.logPatterns)) {
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

    static long sequenceHeadSafe(Connection c, FamilyTables t) throws SQLException {
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

    /** Every group of a stream already resolved (one statement; no catalog read). */
    public List<GroupInfo> list(StreamInfo s) {
        return list(s, null);
    }

    private List<GroupInfo> list(StreamInfo s, String only) {
        FamilyTables t = tables(s.id());
        return db.read("list groups of '" + s.name() + "'", c -> {
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

}
