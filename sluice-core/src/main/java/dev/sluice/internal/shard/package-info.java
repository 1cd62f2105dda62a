/**
 * Shard leases of partitioned consumer groups: which member (a fleet instance of the group's consumer worker) owns
 * which bucket, as renewable leases in {@code shard_lease} ({@link dev.sluice.internal.shard.ShardSql} owns the
 * table). {@link dev.sluice.internal.shard.Shards} declares and lists a group's buckets;
 * {@link dev.sluice.internal.shard.ShardLeases} runs one heartbeat per client for all its
 * {@link dev.sluice.internal.shard.ShardMember}s.
 */
package dev.sluice.internal.shard;
