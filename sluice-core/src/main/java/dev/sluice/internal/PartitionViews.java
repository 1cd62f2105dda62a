package dev.sluice.internal;

import dev.sluice.PartitionInfo;
import dev.sluice.internal.consume.GroupOperations;
import dev.sluice.internal.consume.GroupRegistry;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.shard.BucketOwner;
import dev.sluice.internal.shard.Shards;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** What operators see of a partitioned group's buckets: each bucket's position (the stream's family) with its owner (the shard leases). */
final class PartitionViews {
    private final Db db;
    private final GroupRegistry groups;
    private final GroupOperations operations;
    private final Shards shards;

    PartitionViews(Db db, GroupRegistry groups, GroupOperations operations, Shards shards) {
        this.db = db;
        this.groups = groups;
        this.operations = operations;
        this.shards = shards;
    }

    /** The buckets in bucket order (empty for a group without partitions). */
    List<PartitionInfo> list(String stream, String group) {
        GroupRegistry.GroupRef ref = groups.resolve(stream, group);
        if (!ref.config().partitioned()) {
            return List.of();
        }
        List<long[]> positions = operations.bucketPositions(stream, group);
        Map<Integer, BucketOwner> owners = new HashMap<>();
        for (BucketOwner o : db.read("list bucket owners", c -> shards.list(c, ref.groupId()))) {
            owners.put(o.bucket(), o);
        }
        long head = groups.require(stream, group).head();
        List<PartitionInfo> out = new ArrayList<>();
        for (long[] p : positions) {
            BucketOwner o = owners.get((int) p[0]);
            boolean owned = o != null && o.leaseExpiresAt() != null;
            out.add(new PartitionInfo((int) p[0], p[1], Math.max(0, head - p[1]), owned ? o.ownerInstanceId() : 0,
                    owned ? o.holder() : null, owned ? o.leaseExpiresAt() : null, o == null ? null : o.heartbeatAt()));
        }
        return out;
    }
}
