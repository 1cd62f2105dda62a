package dev.sluice.internal.maint;

import dev.sluice.StreamConfig;
import dev.sluice.internal.consume.ConsumeSweeps;
import dev.sluice.internal.produce.ProduceSweeps;
import dev.sluice.internal.schema.FamilyTables;
import java.time.Duration;
import java.time.Instant;

/** One stream as the {@link Janitor} keeps it: its statements (built once) and what it remembers between passes. */
final class StreamState {
    final FamilyTables tables;
    final ProduceSweeps produce;
    final ConsumeSweeps consume;
    final RetentionSql retentionSql;

    /** The head partitions_ahead last handled (-1: never). */
    long aheadHead = -1;
    /** The exclusive upper id bound of the log's partitions as last seen (-1: not read yet). */
    long coveredUpTo = -1;
    /** When retention may find something to drop (null: look at the next pass). */
    RetentionMemo retention;

    /**
     * Retention's fence observation that had not settled at its pass, checked again at the next: it settles once the
     * producer transactions open when it was taken have ended, however many began since. (A fresh observation at
     * every pass would never settle while producer transactions overlap.)
     */
    dev.sluice.internal.consume.SnapshotFence.Observation retentionObservation;

    final SweepDue keys = new SweepDue();
    final SweepDue heads = new SweepDue();
    final SweepDue deliveryLog = new SweepDue();

    StreamState(String quotedSchema, long streamId) {
        this.tables = new FamilyTables(quotedSchema, streamId);
        this.produce = new ProduceSweeps(tables);
        this.consume = new ConsumeSweeps(tables);
        this.retentionSql = new RetentionSql(tables);
    }

    /**
     * Why retention found nothing more to drop, as two conditions either of which is enough to skip the stream: the
     * time before which nothing can have aged out or be released ({@code notBefore}), and the head the log must reach
     * before its lowest kept partition is below the head's ({@code needHead}). Valid for the retention settings it
     * was made under.
     */
    record RetentionMemo(Duration retention, boolean allowDropPastCommitted, Instant notBefore, long needHead) {
        boolean skips(StreamConfig c, Instant now, long head) {
            if (!retention.equals(c.retention()) || allowDropPastCommitted != c.allowDropPastCommitted()) {
                return false;
            }
            return (notBefore != null && now.isBefore(notBefore)) || head < needHead;
        }
    }
}
