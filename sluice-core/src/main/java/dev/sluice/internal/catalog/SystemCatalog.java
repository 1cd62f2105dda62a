package dev.sluice.internal.catalog;

import dev.sluice.SystemInfo;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.jdbc.Identifiers;
import dev.sluice.internal.schema.Migrator;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;

/** Installation and inspection of one schema's control plane. */
public final class SystemCatalog {
    private final Db db;
    private final String schema;
    private final String q;
    private final Migrator migrator;

    public SystemCatalog(Db db, String schema, Migrator migrator) {
        this.db = db;
        this.schema = schema;
        this.q = Identifiers.quote(schema);
        this.migrator = migrator;
    }

    /** Installs or upgrades the control plane (idempotent) under the schema lock. */
    public SystemInfo register(boolean allowMigrate) {
        return db.transaction("register the control plane", c -> {
            migrator.lockSchema(c);
            migrator.ensureSystem(c, allowMigrate);
            return read(c).orElseThrow();
        });
    }

    /** The installed control plane, or empty when the schema has none. Checks the version gate. */
    public Optional<SystemInfo> get() {
        return db.read("read the control plane", c -> {
            if (!migrator.controlPlaneExists(c)) {
                return Optional.empty();
            }
            Migrator.requireCurrent(migrator.systemState(c), "the control plane of schema '" + schema + "'");
            return read(c);
        });
    }

    private Optional<SystemInfo> read(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT s.id, s.name, s.created_at,"
                + " (SELECT coalesce(max(version), 0) FROM " + q + ".migration_log WHERE system_id = s.id)"
                + " FROM " + q + ".system_config s WHERE s.name = 'default'")) {
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                return Optional.of(new SystemInfo(rs.getLong(1), rs.getString(2), schema, rs.getInt(4),
                        migrator.steps().codeVersion(dev.sluice.internal.schema.Scope.SYSTEM),
                        rs.getTimestamp(3).toInstant()));
            }
        }
    }
}
