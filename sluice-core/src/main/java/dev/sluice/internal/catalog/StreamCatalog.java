package dev.sluice.internal.catalog;

import dev.sluice.ErrorCode;
import dev.sluice.PartitionExtension;
import dev.sluice.SluiceException;
import dev.sluice.StreamConfig;
import dev.sluice.StreamInfo;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.jdbc.Identifiers;
import dev.sluice.internal.jdbc.Sql;
import dev.sluice.internal.jdbc.SqlErrors;
import dev.sluice.internal.maint.Partitions;
import dev.sluice.internal.schema.FamilyTables;
import dev.sluice.internal.schema.Migrator;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Optional;

/**
 * Registration, lookup, rename and destroy of streams. Every change runs in one transaction under
 * the schema lock, so registration is atomic: the config row, the family tables, the first
 * partitions, the ledger rows and the log entry commit together or not at all.
 */
public final class StreamCatalog {
    private final Db db;
    private final String schema;
    private final String q;
    private final Migrator migrator;
    private final String clientId;
    private final StreamSql sql;

    /** A catalog of the streams in {@code schema}. */
    public StreamCatalog(Db db, String schema, Migrator migrator, String clientId) {
        this.db = db;
        this.schema = schema;
        this.q = Identifiers.quote(schema);
        this.migrator = migrator;
        this.clientId = clientId;
        this.sql = new StreamSql(q);
    }

    /** Creates the stream (and the control plane if missing) or replaces its mutable config. */
    public StreamInfo register(String name, StreamConfig config, boolean allowMigrate) {
        Names.validate("stream", name);
        return db.transaction("register stream '" + name + "'", c -> {
            migrator.lockSchema(c);
            migrator.ensureSystem(c, allowMigrate);
            Optional<StreamInfo> existing = select(c, name, true);
            if (existing.isEmpty()) {
                if (!mayCreateTables(c)) {
                    throw notPermitted(name, null); // before the insert: a runtime role may write stream_config
                }
                long id = insert(c, name, config);
                try {
                    migrator.ensureFamily(c, id, name, true);
                    Partitions.ensureAhead(c, new FamilyTables(q, id), config.partitionSize(), 0);
                } catch (SQLException e) {
                    if (SqlErrors.INSUFFICIENT_PRIVILEGE.equals(e.getSQLState())) {
                        throw notPermitted(name, e); // e.g. CREATE on the schema but no REFERENCES on stream_config
                    }
                    throw e;
                }
                log(c, id, name, "created", config);
            } else {
                StreamInfo current = existing.get();
                if (current.config().partitionSize() != config.partitionSize()) {
                    throw new SluiceException(ErrorCode.IMMUTABLE_FIELD, "stream '" + name + "' has partition size "
                            + current.config().partitionSize() + "; it cannot change to " + config.partitionSize());
                }
                try {
                    migrator.ensureFamily(c, current.id(), name, allowMigrate);
                } catch (SQLException e) {
                    if (SqlErrors.INSUFFICIENT_PRIVILEGE.equals(e.getSQLState())) {
                        throw notPermitted(name, e); // a family behind the code, and a runtime role may not migrate it
                    }
                    throw e;
                }
                // Producers of a role without DDL rights cannot extend the log themselves; an admin's
                // re-registration does it. A runtime role's re-registration (an application declaring its
                // streams at start) leaves the partitions to the migration role instead of failing.
                FamilyTables family = new FamilyTables(q, current.id());
                if (Partitions.mayCreate(c, family)) {
                    Partitions.lock(c, schema, current.id());
                    Partitions.ensureAhead(c, family, config.partitionSize(), Partitions.head(c, family));
                }
                boolean changed = !current.config().equals(config);
                if (changed) {
                    update(c, current.id(), config);
                }
                log(c, current.id(), name, changed ? "updated" : "unchanged", config);
            }
            return select(c, name, false).orElseThrow();
        });
    }

    /**
     * Creates the stream's missing log partitions from its head's through {@code partitionsAhead}
     * more, in one transaction under the stream's partition lock (never the schema lock: producers
     * keep writing meanwhile).
     */
    public PartitionExtension extendPartitions(String name, int partitionsAhead) {
        Names.validate("stream", name);
        return db.transaction("extend partitions of stream '" + name + "'", c -> {
            requireSystem(c);
            StreamInfo info = select(c, name, false).orElseThrow(() -> notFound(name));
            FamilyTables family = new FamilyTables(q, info.id());
            Partitions.lock(c, schema, info.id());
            long head = Partitions.head(c, family);
            List<String> created = Partitions.ensureAheadBy(c, family, info.config().partitionSize(), head, partitionsAhead);
            return new PartitionExtension(info.name(), created, head, Partitions.coveredUpTo(c, family));
        });
    }

    /** The stream, or empty when it (or the whole control plane) does not exist. */
    public Optional<StreamInfo> get(String name) {
        Names.validate("stream", name);
        return db.read("read stream '" + name + "'", c -> {
            if (!systemReadable(c)) {
                return Optional.empty();
            }
            return select(c, name, false);
        });
    }

    /** The stream or {@link ErrorCode#STREAM_NOT_FOUND}. */
    public StreamInfo require(String name) {
        return get(name).orElseThrow(() -> notFound(name));
    }

    /**
     * The stream for producing or consuming: it must exist and its family must be at the code's
     * version (no migration happens here; producers and consumers need no DDL rights).
     */
    public StreamInfo requireUsable(String name) {
        StreamInfo info = require(name);
        int code = familyCodeVersion();
        if (info.familyVersion() < code) {
            throw new SluiceException(ErrorCode.DATABASE_OLDER, "stream '" + name + "' is at migration version "
                    + info.familyVersion() + " but this code needs " + code + "; run 'sluice migrate up'");
        }
        if (info.familyVersion() > code) {
            throw new SluiceException(ErrorCode.DATABASE_NEWER, "stream '" + name + "' is at migration version "
                    + info.familyVersion() + " but this code knows versions up to " + code);
        }
        return info;
    }

    /** The stream-family migration version this code works with; a family at another version is not usable. */
    public int familyCodeVersion() {
        return migrator.steps().codeVersion(dev.sluice.internal.schema.Scope.STREAM);
    }

    /** The quoted schema, for building family table names. */
    public String quotedSchema() {
        return q;
    }

    /** Every stream of the schema, by name. */
    public List<StreamInfo> list() {
        return db.read("list streams", c -> {
            if (!systemReadable(c)) {
                return List.<StreamInfo>of();
            }
            return Sql.list(c, sql.list, StreamRows::info);
        });
    }

    /** Renames a stream; its id, and so its family's table names, stay. */
    public StreamInfo rename(String from, String to) {
        Names.validate("stream", from);
        Names.validate("stream", to);
        return db.transaction("rename stream '" + from + "'", c -> {
            migrator.lockSchema(c);
            requireSystem(c);
            StreamInfo current = select(c, from, true).orElseThrow(() -> notFound(from));
            if (from.equals(to)) {
                return current;
            }
            if (select(c, to, false).isPresent()) {
                throw new SluiceException(ErrorCode.STREAM_NAME_TAKEN, "cannot rename '" + from + "' to '" + to
                        + "': another stream has that name");
            }
            try {
                Sql.update(c, sql.rename, to, current.id());
            } catch (SQLException e) {
                if (SqlErrors.UNIQUE_VIOLATION.equals(e.getSQLState())) {
                    throw new SluiceException(ErrorCode.STREAM_NAME_TAKEN, "cannot rename '" + from + "' to '" + to
                            + "': another stream has that name", e);
                }
                throw e;
            }
            log(c, current.id(), to, "renamed", current.config());
            return select(c, to, false).orElseThrow();
        });
    }

    /**
     * Drops the stream's family of tables and deletes its control-plane rows (groups, logs and ledger
     * rows cascade). Refuses a non-empty stream unless {@code force}.
     */
    public void destroy(String name, boolean force) {
        Names.validate("stream", name);
        db.transaction("destroy stream '" + name + "'", c -> {
            migrator.lockSchema(c);
            requireSystem(c);
            StreamInfo current = select(c, name, true).orElseThrow(() -> notFound(name));
            FamilyTables family = new FamilyTables(q, current.id());
            if (!force && hasMessages(c, family)) {
                throw new SluiceException(ErrorCode.STREAM_NOT_EMPTY, "stream '" + name
                        + "' holds messages; destroy it with force to drop them");
            }
            StringBuilder drop = new StringBuilder("DROP TABLE IF EXISTS ");
            List<String> tables = family.tableNames();
            for (int i = 0; i < tables.size(); i++) {
                drop.append(i == 0 ? "" : ", ").append(q).append('.').append(tables.get(i));
            }
            try (Statement s = c.createStatement()) {
                s.execute(drop.toString());
                s.execute("DROP SEQUENCE IF EXISTS " + family.messageLogSequence());
            }
            Sql.update(c, sql.delete, current.id());
            return null;
        });
    }

    private boolean hasMessages(Connection c, FamilyTables family) throws SQLException {
        try (Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT EXISTS (SELECT 1 FROM " + family.messageLog() + ")")) {
            rs.next();
            return rs.getBoolean(1);
        }
    }

    private boolean systemReadable(Connection c) throws SQLException {
        if (!migrator.controlPlaneExists(c)) {
            return false;
        }
        Migrator.requireCurrent(migrator.systemState(c), "the control plane of schema '" + schema + "'");
        return true;
    }

    private void requireSystem(Connection c) throws SQLException {
        if (!systemReadable(c)) {
            throw new SluiceException(ErrorCode.SYSTEM_NOT_REGISTERED, "schema '" + schema + "' has no Sluice control plane");
        }
    }

    private Optional<StreamInfo> select(Connection c, String name, boolean forUpdate) throws SQLException {
        return Sql.first(c, forUpdate ? sql.byNameForUpdate : sql.byName, StreamRows::info, name);
    }

    private long insert(Connection c, String name, StreamConfig config) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.insert)) {
            ps.setString(1, name);
            StreamRows.bindConfig(ps, 2, config);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private void update(Connection c, long id, StreamConfig config) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.update)) {
            int next = StreamRows.bindConfig(ps, 1, config);
            ps.setLong(next, id);
            ps.executeUpdate();
        }
    }

    private void log(Connection c, long id, String name, String action, StreamConfig config) throws SQLException {
        Sql.update(c, sql.log, id, name, action, StreamRows.json(config), clientId);
    }

    /** Whether this database user may create tables in the schema (the family of a new stream). */
    private boolean mayCreateTables(Connection c) throws SQLException {
        return Sql.first(c, "SELECT has_schema_privilege(?, 'CREATE')", rs -> rs.getBoolean(1), schema).orElse(false);
    }

    private static SluiceException notPermitted(String name, SQLException cause) {
        return new SluiceException(ErrorCode.REGISTRATION_NOT_PERMITTED, "stream '" + name + "' needs tables this database"
                + " user may not create; register it as the migration role that owns the schema ('sluice stream register "
                + name + "' with that role's --database-url), then use it with this one", cause);
    }

    private static SluiceException notFound(String name) {
        return new SluiceException(ErrorCode.STREAM_NOT_FOUND, "stream '" + name + "' does not exist");
    }
}
