package dev.sluice.internal.consume;

import dev.sluice.GroupConfig;
import dev.sluice.internal.jdbc.Sql;
import dev.sluice.internal.schema.FamilyTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The janitor's way into the consume tables of one stream: bounded deletes of old dead letters and delivery-log
 * events (statements of {@link ExceptionSql}, the tables' owner), and the reads retention decides by — the lowest
 * committed position of the stream's groups ({@link RangeSql}) and whether exception rows or range leases lie in an
 * id range. Built once per stream; each call is one statement on a connection the caller manages.
 */
public final class ConsumeSweeps {
    private final ConsumeSql sql;
    /** The retention hold in one round trip: exception rows, range leases, lowest committed. */
    private final String hold;

    /** The statements of one stream's family; no I/O. */
    public ConsumeSweeps(FamilyTables tables) {
        this.sql = ConsumeSql.of(tables);
        this.hold = "SELECT (" + sql.exceptions.rowsInRange + "), (" + sql.ranges.leasesInRange + "), ("
                + sql.ranges.lowestCommitted + ")";
    }

    /** Deletes up to {@code limit} delivery-log events older than {@code retention}; returns how many. */
    public int deleteOldDeliveryLog(Connection c, Duration retention, int limit) throws SQLException {
        return Sql.update(c, sql.exceptions.deleteOldDeliveryLog, seconds(retention), limit);
    }

    /** The time of the oldest delivery-log event, or empty when there is none. */
    public Optional<Instant> oldestDeliveryLog(Connection c) throws SQLException {
        return time(c, sql.exceptions.oldestDeliveryLog);
    }

    /** Deletes up to {@code limit} of the group's dead letters that went dead more than {@code retention} ago. */
    public int deleteOldDeadLetters(Connection c, long groupId, Duration retention, int limit) throws SQLException {
        double s = seconds(retention);
        return Sql.update(c, sql.exceptions.deleteOldDeadLetters, groupId, groupId, s, limit, s);
    }

    /** When the group's oldest dead letter went dead, or empty when it has none. */
    public Optional<Instant> oldestDeadLetter(Connection c, long groupId) throws SQLException {
        return time(c, sql.exceptions.oldestDeadLetter, groupId);
    }

    /** The lowest committed position over the stream's groups as of now; empty when the stream has no group. */
    public OptionalLong lowestCommitted(Connection c, long streamId) throws SQLException {
        try (PreparedStatement ps = Sql.bind(c.prepareStatement(sql.ranges.lowestCommitted), streamId);
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            long v = rs.getLong(1);
            return rs.wasNull() ? OptionalLong.empty() : OptionalLong.of(v);
        }
    }

    /**
     * What holds ids {@code [low, high)} of the stream's log from retention, read in one statement: exception rows of
     * any group (ready, deferred, inflight, dead), range leases overlapping it, and the lowest committed position.
     */
    public Hold hold(Connection c, long streamId, long low, long high) throws SQLException {
        try (PreparedStatement ps = Sql.bind(c.prepareStatement(hold), streamId, low, high, streamId, high, low, streamId);
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            long committed = rs.getLong(3);
            OptionalLong lowest = rs.wasNull() ? OptionalLong.empty() : OptionalLong.of(committed);
            return new Hold(rs.getBoolean(1), rs.getBoolean(2), lowest);
        }
    }

    /**
     * What holds an id range of the log.
     *
     * @param exceptionRows   some group has a ready, deferred, inflight or dead row for a message in it
     * @param leases          a range lease (live, or expired and not taken over yet) overlaps it
     * @param lowestCommitted the lowest committed position over the stream's groups (empty: no group)
     */
    public record Hold(boolean exceptionRows, boolean leases, OptionalLong lowestCommitted) {
    }

    /** A consumer group as the dead-letter sweep needs it. */
    public record GroupRetention(long groupId, long streamId, String name, Duration deadLetterRetention) {
    }

    /** The schema's groups with their dead-letter retention, read in one statement; built once per schema. */
    public static final class Groups {
        private final String list;

        /** {@code quotedSchema}: the installation schema, quoted. */
        public Groups(String quotedSchema) {
            this.list = "SELECT id, stream_id, name, config ->> '" + GroupDocs.DEAD_LETTER_RETENTION + "' FROM " + quotedSchema
                    + ".consumer_group_config ORDER BY stream_id, id";
        }

        /** Every group of the schema; a group whose document has no (or an unreadable) retention gets the default. */
        public List<GroupRetention> list(Connection c) throws SQLException {
            List<GroupRetention> out = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement(list); ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new GroupRetention(rs.getLong(1), rs.getLong(2), rs.getString(3), retention(rs.getString(4))));
                }
            }
            return out;
        }

        private static Duration retention(String iso) {
            if (iso == null) {
                return GroupConfig.DEFAULT_DEAD_LETTER_RETENTION;
            }
            try {
                Duration d = Duration.parse(iso);
                return d.isNegative() || d.isZero() ? GroupConfig.DEFAULT_DEAD_LETTER_RETENTION : d;
            } catch (DateTimeParseException e) {
                return GroupConfig.DEFAULT_DEAD_LETTER_RETENTION;
            }
        }
    }

    private static double seconds(Duration d) {
        return d.toNanos() / 1e9;
    }

    private static Optional<Instant> time(Connection c, String query, Object... params) throws SQLException {
        return Sql.first(c, query, rs -> {
            Timestamp t = rs.getTimestamp(1);
            return t == null ? null : t.toInstant();
        }, params);
    }
}
