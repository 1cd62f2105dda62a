package dev.sluice;

import java.time.Instant;

/**
 * One bucket of a partitioned group ({@link ConsumerGroup#partitions()}): its position and who owns it.
 *
 * @param bucket          the bucket, {@code 0..partitions-1}
 * @param position        every message of the bucket at or below this id is resolved (handled, or an exception row)
 * @param lag             {@code head - position}: ids above the position (cursor arithmetic; most belong to other buckets)
 * @param ownerInstanceId the owning member's fleet instance ({@code sluice fleet list --instances}), 0 when unowned
 * @param holder          the owner's holder ({@code host:pid} or the client id), null when unowned or unknown
 * @param leaseExpiresAt  when the owner's lease runs out unless renewed, null when unowned
 * @param heartbeatAt     the owner's last renewal, null before the first
 */
public record PartitionInfo(int bucket, long position, long lag, long ownerInstanceId, String holder, Instant leaseExpiresAt,
                            Instant heartbeatAt) {
    /** Whether a member holds the bucket with a lease that has not run out at {@code now}. */
    public boolean ownedAt(Instant now) {
        return leaseExpiresAt != null && leaseExpiresAt.isAfter(now);
    }
}
