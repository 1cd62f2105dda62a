package dev.sluice;

import dev.sluice.internal.catalog.MigrationAdmin;
import java.util.List;

/**
 * Operator access to the schema's migrations ({@code sluice migrate status|up|sql}). Obtain it from
 * {@link Sluice#migrations()}.
 */
public final class Migrations {
    private final MigrationAdmin admin;

    Migrations(MigrationAdmin admin) {
        this.admin = admin;
    }

    /** The state of the control plane and of every stream family; gate problems are reported, not thrown. */
    public List<MigrationStatus> status() {
        return admin.status();
    }

    /**
     * Applies every pending step (installing the control plane when absent) in one transaction under
     * the schema lock, and returns the resulting status. A newer or tampered ledger raises
     * {@link ErrorCode#DATABASE_NEWER} or {@link ErrorCode#MIGRATION_CHECKSUM_MISMATCH} and applies nothing.
     */
    public List<MigrationStatus> up() {
        return admin.up();
    }

    /**
     * The complete DDL of the control plane and of one stream family (for the given stream id), with
     * the {@code migration_log} rows that make the gates accept a schema built from it.
     */
    public String sql(long streamId) {
        if (streamId < 1) {
            throw new SluiceException(ErrorCode.INVALID_CONFIG, "stream id must be at least 1 (got " + streamId + ")");
        }
        return admin.sql(streamId);
    }
}
