package dev.sluice.internal.schema;

import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import dev.sluice.internal.jdbc.Identifiers;
import dev.sluice.internal.jdbc.SqlErrors;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * The version gates and the migration runner of one installation schema. Steps are applied inside the
 * caller's transaction together with their {@code migration_log} rows, under the schema-scoped advisory
 * lock ({@link #lockSchema}), so concurrent deployers settle on one owner and a failure leaves nothing.
 * A ledger newer than the code or with a changed checksum is refused before anything is touched.
 */
public final class Migrator {
    /** How long registration and migration wait for the schema lock by default. */
    public static final java.time.Duration DEFAULT_LOCK_TIMEOUT = java.time.Duration.ofSeconds(60);

    private final String schema;
    private final String q;
    private final String appliedBy;
    private final SchemaSteps steps;
    private volatile java.time.Duration lockTimeout = DEFAULT_LOCK_TIMEOUT;
    private volatile boolean forceSchema;

    public Migrator(String schema, String appliedBy) {
        this(schema, appliedBy, SchemaSteps.RELEASED);
    }

    public Migrator(String schema, String appliedBy, SchemaSteps steps) {
        this.schema = schema;
        this.q = Identifiers.quote(schema);
        this.appliedBy = appliedBy;
        this.steps = steps;
    }

    /** Changes how long {@link #lockSchema} waits (tests use short waits). */
    public Migrator lockTimeout(java.time.Duration timeout) {
        this.lockTimeout = timeout;
        return this;
    }

    /**
     * Whether the control plane may be installed into a schema that holds objects of others and no Sluice
     * ledger (default false: refused with {@code SCHEMA_NOT_SLUICE}).
     */
    public Migrator forceSchema(boolean force) {
        this.forceSchema = force;
        return this;
    }

    /** The steps this migrator applies. */
    public SchemaSteps steps() {
        return steps;
    }

    /** A step recorded in the ledger. */
    public record AppliedStep(int version, String step, String checksum) {
    }

    /** What the ledger of one scope says compared with the code. */
    public record ScopeState(int databaseVersion, int codeVersion, List<MigrationStep> pending) {
    }

    /**
     * Takes the schema-scoped advisory lock for the rest of the caller's transaction. Every
     * registration, rename, destroy and migration of this schema serializes on it.
     */
    public void lockSchema(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("SET LOCAL lock_timeout = " + Math.max(1, lockTimeout.toMillis()));
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))")) {
            ps.setString(1, "sluice.schema:" + schema);
            ps.execute();
        } catch (SQLException e) {
            if (SqlErrors.LOCK_NOT_AVAILABLE.equals(e.getSQLState())) {
                throw new SluiceException(ErrorCode.MIGRATION_LOCK_TIMEOUT,
                        "waited " + lockTimeout.toMillis() + " ms for the schema lock of '" + schema + "'", e);
            }
            throw e;
        }
        try (Statement s = c.createStatement()) {
            s.execute("SET LOCAL lock_timeout = 0");
        }
    }

    /** Whether the control plane's ledger exists in the schema. */
    public boolean controlPlaneExists(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
            ps.setString(1, q + ".migration_log");
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    /** Whether the installation schema exists (created by Sluice or beforehand, for example for a migration role). */
    private boolean schemaExists(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT to_regnamespace(?) IS NOT NULL")) {
            ps.setString(1, q);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    /** The ledger rows of a scope, oldest first; the system scope ignores {@code streamId}. */
    public List<AppliedStep> applied(Connection c, Scope scope, long streamId) throws SQLException {
        String where = scope == Scope.SYSTEM ? "system_id IS NOT NULL" : "stream_id = ?";
        List<AppliedStep> steps = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT version, step, checksum FROM " + q
                + ".migration_log WHERE " + where + " AND direction = 'up' ORDER BY version")) {
            if (scope == Scope.STREAM) {
                ps.setLong(1, streamId);
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    steps.add(new AppliedStep(rs.getInt(1), rs.getString(2), rs.getString(3)));
                }
            }
        }
        return steps;
    }

    /** Compares a ledger with the code; raises {@code DATABASE_NEWER} or {@code MIGRATION_CHECKSUM_MISMATCH}. */
    public ScopeState inspect(Scope scope, String owner, List<AppliedStep> applied) {
        List<MigrationStep> known = steps.of(scope);
        int codeVersion = steps.codeVersion(scope);
        int expected = 1;
        for (AppliedStep a : applied) {
            if (a.version() > codeVersion) {
                throw new SluiceException(ErrorCode.DATABASE_NEWER, owner + " is at migration version " + a.version()
                        + " but this code knows versions up to " + codeVersion);
            }
            MigrationStep step = known.get(a.version() - 1);
            if (a.version() != expected) {
                throw new SluiceException(ErrorCode.MIGRATION_CHECKSUM_MISMATCH, owner + ": the ledger lacks step "
                        + known.get(expected - 1).stepName() + " before version " + a.version());
            }
            if (!step.checksum().equals(a.checksum()) || !step.stepName().equals(a.step())) {
                throw new SluiceException(ErrorCode.MIGRATION_CHECKSUM_MISMATCH, owner + ": applied step " + a.step()
                        + " (version " + a.version() + ") has checksum " + a.checksum() + " but the code's "
                        + step.stepName() + " has " + step.checksum());
            }
            expected++;
        }
        int databaseVersion = applied.isEmpty() ? 0 : applied.get(applied.size() - 1).version();
        List<MigrationStep> pending = known.stream().filter(s -> s.version() > databaseVersion).toList();
        return new ScopeState(databaseVersion, codeVersion, pending);
    }

    /** The control plane's state, without changing anything (version 0 when it is not installed). */
    public ScopeState systemState(Connection c) throws SQLException {
        List<AppliedStep> applied = controlPlaneExists(c) ? applied(c, Scope.SYSTEM, 0) : List.of();
        return inspect(Scope.SYSTEM, "the control plane of schema '" + schema + "'", applied);
    }

    /** A stream family's state, without changing anything. */
    public ScopeState familyState(Connection c, long streamId, String streamName) throws SQLException {
        return inspect(Scope.STREAM, "stream '" + streamName + "' (id " + streamId + ")", applied(c, Scope.STREAM, streamId));
    }

    /** Raises {@code DATABASE_OLDER} unless the scope is current. */
    public static void requireCurrent(ScopeState state, String owner) {
        if (!state.pending().isEmpty()) {
            throw new SluiceException(ErrorCode.DATABASE_OLDER, owner + " is at migration version " + state.databaseVersion()
                    + " but this code needs version " + state.codeVersion() + "; run 'sluice migrate up'");
        }
    }

    /**
     * Brings the control plane to the code's version (installing it when absent), or checks it when
     * {@code allowMigrate} is false. The caller holds the schema lock and the transaction.
     *
     * @return the control plane's version afterwards
     */
    public int ensureSystem(Connection c, boolean allowMigrate) throws SQLException {
        ScopeState state = systemState(c);
        if (state.pending().isEmpty()) {
            return state.databaseVersion();
        }
        if (!allowMigrate) {
            requireCurrent(state, "the control plane of schema '" + schema + "'");
        }
        if (state.databaseVersion() == 0 && !forceSchema) {
            ForeignObjects.refuseUnlessEmpty(c, schema); // a first install: never into someone else's schema
        }
        boolean schemaExists = schemaExists(c);
        for (MigrationStep step : state.pending()) {
            try (Statement s = c.createStatement()) {
                s.execute(schemaExists ? step.renderInExistingSchema(q, 0) : step.render(q, 0));
            }
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + q + ".migration_log"
                    + " (system_id, scope, version, step, checksum, applied_by)"
                    + " SELECT id, 'system', ?, ?, ?, ? FROM " + q + ".system_config WHERE name = 'default'")) {
                bindStep(ps, step);
                if (ps.executeUpdate() != 1) {
                    throw new IllegalStateException("control plane step " + step.stepName() + " left no system_config row");
                }
            }
        }
        return state.codeVersion();
    }

    /**
     * Brings a stream's family to the code's version (creating it when the ledger has none), or checks
     * it when {@code allowMigrate} is false. The caller holds the schema lock and the transaction.
     */
    public int ensureFamily(Connection c, long streamId, String streamName, boolean allowMigrate) throws SQLException {
        ScopeState state = familyState(c, streamId, streamName);
        if (state.pending().isEmpty()) {
            return state.databaseVersion();
        }
        if (!allowMigrate) {
            requireCurrent(state, "stream '" + streamName + "' (id " + streamId + ")");
        }
        for (MigrationStep step : state.pending()) {
            try (Statement s = c.createStatement()) {
                s.execute(step.render(q, streamId));
            }
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + q + ".migration_log"
                    + " (stream_id, scope, version, step, checksum, applied_by) VALUES (?, 'stream', ?, ?, ?, ?)")) {
                ps.setLong(1, streamId);
                ps.setInt(2, step.version());
                ps.setString(3, step.stepName());
                ps.setString(4, step.checksum());
                ps.setString(5, appliedBy);
                ps.executeUpdate();
            }
        }
        return state.codeVersion();
    }

    private void bindStep(PreparedStatement ps, MigrationStep step) throws SQLException {
        ps.setInt(1, step.version());
        ps.setString(2, step.stepName());
        ps.setString(3, step.checksum());
        ps.setString(4, appliedBy);
    }

    /**
     * The complete DDL of the control plane and of one stream family, with the ledger rows that make
     * the gates accept a schema built from it (for users who apply DDL with Flyway or Liquibase).
     */
    public String printableSql(long streamId) {
        StringBuilder out = new StringBuilder();
        out.append("-- Sluice DDL for schema ").append(q).append(". Apply in one transaction per scope.\n");
        out.append("-- Control plane: versions 1..").append(steps.codeVersion(Scope.SYSTEM)).append("\n\n");
        for (MigrationStep step : steps.system()) {
            out.append("-- ").append(step.stepName()).append(" sha256:").append(step.checksum()).append("\n");
            out.append(step.render(q, 0)).append("\n");
            out.append("INSERT INTO ").append(q).append(".migration_log (system_id, scope, version, step, checksum, applied_by)\n")
                    .append("  SELECT id, 'system', ").append(step.version()).append(", '").append(step.stepName()).append("', '")
                    .append(step.checksum()).append("', 'migrate sql' FROM ").append(q)
                    .append(".system_config WHERE name = 'default';\n\n");
        }
        out.append("-- Family of the stream with id ").append(streamId)
                .append(" (its stream_config row must exist first): versions 1..")
                .append(steps.codeVersion(Scope.STREAM)).append("\n");
        out.append("-- Partitions of message_log_").append(streamId)
                .append(" are created by registration and the janitor (they depend on partition_size).\n\n");
        for (MigrationStep step : steps.stream()) {
            out.append("-- ").append(step.stepName()).append(" sha256:").append(step.checksum()).append("\n");
            out.append(step.render(q, streamId)).append("\n");
            out.append("INSERT INTO ").append(q).append(".migration_log (stream_id, scope, version, step, checksum, applied_by)\n")
                    .append("  VALUES (").append(streamId).append(", 'stream', ").append(step.version()).append(", '")
                    .append(step.stepName()).append("', '").append(step.checksum()).append("', 'migrate sql');\n\n");
        }
        return out.toString();
    }
}
