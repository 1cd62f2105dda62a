/**
 * Maintenance of stream logs: partitions of {@code message_log_<id>} are created ahead of the head ({@code Partitions},
 * {@code PartitionKeeper}), so producers never need DDL rights and never fail for lack of a partition; and the janitor
 * ({@code Janitor}): one bounded pass of the stream sweeps — partitions ahead, retention ({@code Retention}: whole
 * partitions detached and dropped), idempotency keys, empty compaction heads, the delivery log and dead letters — that
 * the elected manager runs. The row deletes are the owners' statements ({@code produce.ProduceSweeps},
 * {@code consume.ConsumeSweeps}); partition DDL stays here. {@code docs/maintenance.md} describes it.
 */
package dev.sluice.internal.maint;
