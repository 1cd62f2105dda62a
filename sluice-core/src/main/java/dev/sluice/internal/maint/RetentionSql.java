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

    /** Takes the log's parent table for the rest of the transaction, before any partition: producers lock parent first. */
    final String lockLog;

    /** Whether a table is (still) a partition of the log. Parameters: log, partition (both qualified). */
    static final String ATTACHED = "SELECT EXISTS (SELECT 1 FROM pg_inherits WHERE inhparent = to_regclass(?)"
            + " AND inhrelid = to_regclass(?))";

    private final FamilyTables t;

    RetentionSql(FamilyTables t) {
        this.t = t;
        this.age = "SELECT EXISTS (SELECT 1 FROM " + t.messageLog() + " WHERE id >= ? AND id < ?"
                + "   AND created_at >= now() - make_interval(secs => ?)),"
                + " (SELECT created_at FROM " + t.messageLog() + " WHERE id >= ? AND id < ? ORDER BY id DESC LIMIT 1)";
        this.lockLog = "LOCK TABLE ONLY " + t.messageLog() + " IN ACCESS EXCLUSIVE MODE";
    }

    /** Detaches partition {@code index} from the log. */
    String detach(long index) {
        return "ALTER TABLE " + t.messageLog() + " DETACH PARTITION " + t.messageLogPartition(index);
    }

    /** Drops the (detached) partition {@code index}. */
    String drop(long index) {
        return "DROP TABLE " + t.messageLogPartition(index);
    }
}
