package dev.sluice.internal.schema;

import java.util.List;

/**
 * The physical names of one stream's family, built only from the numeric stream id (never from
 * user text) and the already-quoted schema. The single place family table names are made.
 */
public record FamilyTables(String quotedSchema, long streamId) {

    /** Unqualified names of every family table, in drop order (children of FKs first is not needed: none point inward). */
    public List<String> tableNames() {
        return List.of(
                "binding_config_log_" + streamId,
                "binding_config_" + streamId,
                "message_key_lease_" + streamId,
                "claim_lease_" + streamId,
                "partition_cursor_" + streamId,
                "consumer_group_cursor_" + streamId,
                "delivery_log_" + streamId,
                "exception_queue_" + streamId,
                "compaction_head_" + streamId,
                "idempotency_key_" + streamId,
                "message_log_" + streamId);
    }

    private String qualified(String table) {
        return quotedSchema + "." + table + "_" + streamId;
    }

    /**
     * The advisory-lock key retention holds (exclusively, for the session) while it re-checks and detaches a log
     * partition, and a rewind holds (shared, for its transaction) before it moves a group back: a group never moves
     * back into a partition between retention's last check and its detach.
     */
    public String retentionLockKey() {
        return "sluice.retention:" + quotedSchema + ":" + streamId;
    }

    public String messageLog() {
        return qualified("message_log");
    }

    /** The partition of the log holding ids {@code [index * size, (index + 1) * size)}. */
    public String messageLogPartition(long index) {
        return quotedSchema + ".message_log_" + streamId + "_" + index;
    }

    public String messageLogSequence() {
        return quotedSchema + ".message_log_" + streamId + "_id_seq";
    }

    /**
     * An SQL expression for the highest id drawn so far (0 before the first). It must go through
     * {@code pg_sequence_last_value}, which reads under the sequence's buffer lock: a plain
     * {@code SELECT last_value FROM seq} can see the transient value nextval writes while it WAL-logs a
     * fetch-ahead (up to 32 ids that no one has drawn yet) — a head "from the future" breaks the
     * snapshot fence (found by the e2e benchmark's no-loss check).
     */
    public String headExpression() {
        return "coalesce(pg_sequence_last_value('" + messageLogSequence() + "'::regclass), 0)";
    }

    public String idempotencyKey() {
        return qualified("idempotency_key");
    }

    public String compactionHead() {
        return qualified("compaction_head");
    }

    public String exceptionQueue() {
        return qualified("exception_queue");
    }

    public String deliveryLog() {
        return qualified("delivery_log");
    }

    public String consumerGroupCursor() {
        return qualified("consumer_group_cursor");
    }

    public String partitionCursor() {
        return qualified("partition_cursor");
    }

    public String claimLease() {
        return qualified("claim_lease");
    }

    public String messageKeyLease() {
        return qualified("message_key_lease");
    }

    public String bindingConfig() {
        return qualified("binding_config");
    }

    public String bindingConfigLog() {
        return qualified("binding_config_log");
    }
}
