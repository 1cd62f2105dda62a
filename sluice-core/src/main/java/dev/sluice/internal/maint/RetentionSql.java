package dev.sluice.internal.maint;

import dev.sluice.internal.schema.FamilyTables;

/**
 * Retention's statements on one stream's log, built once per stream. Values are bind parameters; the partition DDL
 * names tables only through {@link FamilyTables} (an identifier cannot be bound).
 */
final class RetentionSql {
    /**
     * Whether ids {@code [low, high)} hold a message created within the retention (a range probe that partition
     * pruning sends to the one partition), and the creation time of the range's highest id (the schedule of the next
     * look; ids and creation times rise together). Parameters: low, high, retention seconds, low, high.
     */
    final String age;

    /** Retention's session lock on the stream ({@link FamilyTables#retentionLockKey}), without waiting. Parameter: the key. */
    static final String TRY_LOCK = "SELECT pg_try_advisory_lock(hashtextextended(?, 0))";

    /** Gives {@link #TRY_LOCK} back. Parameter: the key. */
    static final String UNLOCK = "SELECT pg_advisory_unlock(hashtextextended(?, 0))";

    /** Sets this session's lock wait for the detach (its waits block nobody). Parameter: the timeout text. */
    static final String SET_LOCK_TIMEOUT = "SELECT set_config('lock_timeout', ?, false)";

    /**
     * This stream's partition tables that are attached to nothing (detached by a janitor that died before it dropped
     * them). Parameters: the schema (quoted), the name pattern.
     */
    static final String LEFTOVERS = "SELECT c.relname FROM pg_class c WHERE c.relnamespace = to_regnamespace(?)"
            + " AND c.relkind = 'r' AND NOT c.relispartition AND c.relname ~ ?";

    /** Puts the session's lock wait back after the detach. */
    static final String RESET_LOCK_TIMEOUT = "RESET lock_timeout";

    /** Whether a table is (still) a partition of the log. Parameters: log, partition (both qualified). */
    static final String ATTACHED = "SELECT EXISTS (SELECT 1 FROM pg_inherits WHERE inhparent = to_regclass(?)"
            + " AND inhrelid = to_regclass(?))";

    private final FamilyTables t;

    RetentionSql(FamilyTables t) {
        this.t = t;
        this.age = "SELECT EXISTS (SELECT 1 FROM " + t.messageLog() + " WHERE id >= ? AND id < ?"
                + "   AND created_at >= now() - make_interval(secs => ?)),"
                + " (SELECT created_at FROM " + t.messageLog() + " WHERE id >= ? AND id < ? ORDER BY id DESC LIMIT 1)";
    }

    /**
     * Detaches partition {@code index} from the log without blocking its users: {@code CONCURRENTLY} takes the parent
     * in SHARE UPDATE EXCLUSIVE mode (producers and consumers go on), marks the partition detach-pending (queries
     * from then on leave it out) and then waits for the transactions that were using the log. Runs outside a
     * transaction block. A wait cut short leaves the partition pending, which {@link #finalizeDetach} completes.
     */
    String detach(long index) {
        return "ALTER TABLE " + t.messageLog() + " DETACH PARTITION " + t.messageLogPartition(index) + " CONCURRENTLY";
    }

    /** Completes a detach that was cut short (the partition is detach-pending). */
    String finalizeDetach(long index) {
        return "ALTER TABLE " + t.messageLog() + " DETACH PARTITION " + t.messageLogPartition(index) + " FINALIZE";
    }

    /** Drops the (detached) partition {@code index}. */
    String drop(long index) {
        return "DROP TABLE " + t.messageLogPartition(index);
    }
}
