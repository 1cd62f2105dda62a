package dev.sluice.internal.shard;

import java.time.Instant;

/**
 * One bucket of a partitioned group as operators see it: who holds it and until when. The owner's lease token is
 * never part of it.
 *
 * @param bucket          the bucket, {@code 0..shardCount-1}
 * @param shardCount      the group's number of buckets
 * @param ownerInstanceId the owning member's fleet instance ({@code worker_instance.id}), 0 when unowned
 * @param holder          the owning instance's holder ({@code host:pid} or the client id) while its row exists, else null
 * @param leaseExpiresAt  when the owner's lease runs out unless renewed, null when unowned
 * @param heartbeatAt     the last claim or renewal, null before the first
 * @param updatedAt       the last change of owner (a claim or a release)
 */
public record BucketOwner(int bucket, int shardCount, long ownerInstanceId, String holder, Instant leaseExpiresAt,
                          Instant heartbeatAt, Instant updatedAt) {
    /** Whether a member holds the bucket with a lease that has not run out at {@code now}. */
    public boolean ownedAt(Instant now) {
        return leaseExpiresAt != null && leaseExpiresAt.isAfter(now);
    }
}
