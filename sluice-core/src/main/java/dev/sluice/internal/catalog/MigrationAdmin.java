package dev.sluice.internal.catalog;

import dev.sluice.ErrorCode;
import dev.sluice.MigrationStatus;
import dev.sluice.SluiceException;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.jdbc.Identifiers;
import dev.sluice.internal.maint.Partitions;
import dev.sluice.internal.schema.ExportWriter;
import dev.sluice.internal.schema.FamilyTables;
import dev.sluice.internal.schema.MigrationExport;
import dev.sluice.internal.schema.Migrator;
import dev.sluice.internal.schema.Scope;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/** {@code migrate status|up|sql} and the export: the operator's view of the migration gates of one schema. */
public final class MigrationAdmin {
    private final Db db;
    private final String schema;
    private final String q;
    private final Migrator migrator;

    public MigrationAdmin(Db db, String schema, Migrator migrator) {
        this.db = db;
        this.schema = schema;
        this.q = Identifiers.quote(schema);
        this.migrator = migrator;
    }

    /** The state of every scope; never raises a gate error (it reports it). */
    public List<MigrationStatus> status() {
        return db.read("read migration status", this::status);
    }

    private List<MigrationStatus> status(Connection c) throws SQLException {
        List<MigrationStatus> out = new ArrayList<>();
        int systemCode = migrator.steps().codeVersion(Scope.SYSTEM);
        if (!migrator.controlPlaneExists(c)) {
            out.add(new MigrationStatus("system", schema, null, 0, systemCode, MigrationStatus.State.NOT_INSTALLED, null));
            return out;
        }
        out.add(describe(Scope.SYSTEM, schema, null, migrator.applied(c, Scope.SYSTEM, 0)));
        for (StreamRow stream : streams(c)) {
            out.add(describe(Scope.STREAM, stream.name(), stream.id(), migrator.applied(c, Scope.STREAM, stream.id())));
        }
        return out;
    }

    private MigrationStatus describe(Scope scope, String name, Long streamId, List<Migrator.AppliedStep> applied) {
        int code = migrator.steps().codeVersion(scope);
        int recorded = applied.stream().mapToInt(Migrator.AppliedStep::version).max().orElse(0);
        try {
            Migrator.ScopeState state = migrator.inspect(scope, scope == Scope.SYSTEM ? "the control plane" : "stream '" + name + "'", applied);
            MigrationStatus.State s = state.pending().isEmpty() ? MigrationStatus.State.CURRENT : MigrationStatus.State.PENDING;
            return new MigrationStatus(scope.sqlValue(), name, streamId, state.databaseVersion(), code, s, null);
        } catch (SluiceException e) {
            MigrationStatus.State s = e.code() == ErrorCode.DATABASE_NEWER
                    ? MigrationStatus.State.NEWER : MigrationStatus.State.CHECKSUM_MISMATCH;
            return new MigrationStatus(scope.sqlValue(), name, streamId, recorded, code, s, e.getMessage());
        }
    }

    /**
     * Applies every pending step of every scope in one transaction under the schema lock, and creates
     * every stream's missing log partitions ahead of its head. A newer or tampered scope anywhere raises
     * its coded error and nothing is applied.
     */
    public List<MigrationStatus> up() {
        db.transaction("migrate schema '" + schema + "'", c -> {
            migrator.lockSchema(c);
            migrator.ensureSystem(c, true);
            List<StreamRow> streams = streams(c);
            // Check every family before touching any, so one bad ledger leaves everything as it was.
            for (StreamRow s : streams) {
                migrator.familyState(c, s.id(), s.name());
            }
            for (StreamRow s : streams) {
                migrator.ensureFamily(c, s.id(), s.name(), true);
            }
            // The admin's run also keeps every log's partitions ahead of its head, for runtime roles
            // that may not create them (the same as registering each stream again).
            for (StreamRow s : streams) {
                FamilyTables family = new FamilyTables(q, s.id());
                Partitions.lock(c, schema, s.id());
                Partitions.ensureAhead(c, family, s.partitionSize(), Partitions.head(c, family));
            }
            return null;
        });
        return status();
    }

    /** The printable DDL of the control plane and of the family of stream {@code streamId}. */
    public String sql(long streamId) {
        return migrator.printableSql(streamId);
    }

    /** The Flyway files of the control plane ({@link MigrationExport#flyway}) written into {@code dir}. */
    public List<ExportWriter.Written> exportFlyway(java.nio.file.Path dir, int versionStart) {
        return ExportWriter.write(dir, new MigrationExport(migrator.steps(), q).flyway(versionStart));
    }

    /** The Liquibase changelog of the control plane ({@link MigrationExport#liquibase}) written into {@code dir}. */
    public List<ExportWriter.Written> exportLiquibase(java.nio.file.Path dir) {
        return ExportWriter.write(dir, new MigrationExport(migrator.steps(), q).liquibase());
    }

    /** A stream of the schema as the migration gates see it. */
    private record StreamRow(long id, String name, long partitionSize) {
    }

    private List<StreamRow> streams(Connection c) throws SQLException {
        List<StreamRow> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT id, name, partition_size FROM " + q + ".stream_config ORDER BY id");
             ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                out.add(new StreamRow(rs.getLong(1), rs.getString(2), rs.getLong(3)));
            }
        }
        return out;
    }
}
