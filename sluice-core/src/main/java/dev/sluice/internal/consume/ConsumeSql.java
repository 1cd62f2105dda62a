package dev.sluice.internal.consume;

import dev.sluice.internal.schema.FamilyTables;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The statement owners of one stream's consume tables, built once per stream and shared by every consumer,
 * registry and operation of it ({@link #of}). Each family table is written by exactly one owner:
 * <ul>
 *   <li>{@link RangeSql}: {@code consumer_group_cursor_<id>} and {@code claim_lease_<id>} (the fenced claim
 *   writes both in one statement);</li>
 *   <li>{@link ExceptionSql}: {@code exception_queue_<id>} and {@code delivery_log_<id>};</li>
 *   <li>{@link KeyLeaseSql}: {@code message_key_lease_<id>};</li>
 *   <li>{@link BindingSql}: {@code binding_config_<id>} and {@code binding_config_log_<id>};</li>
 *   <li>{@link PartitionSql}: {@code partition_cursor_<id>} (bucket positions of partitioned groups);</li>
 *   <li>{@link MessageSql}: reads of the log only.</li>
 * </ul>
 */
final class ConsumeSql {
    /** Bounds the rest of the transaction's statements (milliseconds, as text): close's releases use it. */
    static final String STATEMENT_TIMEOUT = "SELECT set_config('statement_timeout', ?, true)";

    /** More streams than this in one process is unusual; the cache then starts over (bounded memory). */
    private static final int MAX_CACHED = 4096;
    private static final ConcurrentHashMap<FamilyTables, ConsumeSql> CACHE = new ConcurrentHashMap<>();

    final FamilyTables tables;
    final RangeSql ranges;
    final ExceptionSql exceptions;
    final KeyLeaseSql keys;
    final BindingSql bindings;
    final MessageSql messages;
    final PartitionSql partitions;
    /**
     * A partitioned group's claim in one round trip: {@link RangeSql#partitionObserve} (the fenced observation and its
     * settling, two statements) then {@link PartitionSql#fetch} (the member's buckets up to the settled head).
     */
    final String partitionClaim;

    private ConsumeSql(FamilyTables t) {
        this.tables = t;
        this.ranges = new RangeSql(t);
        this.exceptions = new ExceptionSql(t);
        this.keys = new KeyLeaseSql(t, ranges);
        this.bindings = new BindingSql(t);
        this.messages = new MessageSql(t);
        this.partitions = new PartitionSql(t);
        this.partitionClaim = ranges.partitionObserve + partitions.fetch;
    }

    /** The owners of the stream's tables, built on first use and then shared. */
    static ConsumeSql of(FamilyTables t) {
        ConsumeSql sql = CACHE.get(t);
        if (sql != null) {
            return sql;
        }
        if (CACHE.size() >= MAX_CACHED) {
            CACHE.clear();
        }
        return CACHE.computeIfAbsent(t, ConsumeSql::new);
    }
}
