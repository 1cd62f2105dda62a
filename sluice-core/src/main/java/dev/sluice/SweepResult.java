package dev.sluice;

import java.time.Duration;
import java.util.Objects;

/**
 * What one maintenance sweep did in one pass ({@link MaintenanceReport}).
 *
 * @param name    the sweep's name, one of the names documented in {@code docs/maintenance.md}
 *                ({@code retention}, {@code idempotency_keys}, {@code compaction_heads}, {@code delivery_log},
 *                {@code dead_letters}, {@code partitions_ahead}, {@code queue_rescue}, {@code queue_expiry},
 *                {@code dead_jobs}, {@code worker_instances}, {@code instance_log}, {@code metrics})
 * @param removed what it removed or made: rows, or partitions for {@code retention} and {@code partitions_ahead}
 *                (snapshots written for {@code metrics})
 * @param took    how long it ran
 * @param error   why it failed (cleaned, one line), or {@code null} when it succeeded; a failed sweep is
 *                retried at the next pass and does not stop the others
 * @param skipped why the sweep left work undone that this database user may not do (a least-privilege runtime
 *                role may not create or drop log partitions; the text names the migration role's command), or
 *                {@code null}; a skip is not a failure ({@link #ok()} stays true)
 */
public record SweepResult(String name, long removed, Duration took, String error, String skipped) {

    public SweepResult {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(took, "took");
    }

    /** A result that skipped nothing. */
    public SweepResult(String name, long removed, Duration took, String error) {
        this(name, removed, took, error, null);
    }

    /** Whether the sweep ran to its end without an error. */
    public boolean ok() {
        return error == null;
    }
}
