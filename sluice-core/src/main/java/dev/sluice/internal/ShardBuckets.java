package dev.sluice.internal;

import dev.sluice.internal.consume.BucketLeases;
import dev.sluice.internal.shard.ShardMember;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Collection;
import java.util.Set;

/** A partitioned consumer's view ({@link BucketLeases}) of its shard leases ({@link ShardMember}). */
final class ShardBuckets implements BucketLeases {
    private final ShardMember member;

    ShardBuckets(ShardMember member) {
        this.member = member;
    }

    /** The shard-lease side of a partitioned group's registration and repartition, for the group registry. */
    static dev.sluice.internal.consume.GroupRegistry.Buckets declarations(dev.sluice.internal.shard.Shards shards) {
        return new dev.sluice.internal.consume.GroupRegistry.Buckets() {
            @Override
            public void declare(Connection c, long groupId, int count) throws SQLException {
                shards.declare(c, groupId, count);
            }

            @Override
            public void repartition(Connection c, long groupId, int count) throws SQLException {
                shards.repartition(c, groupId, count);
            }
        };
    }

    @Override
    public Set<Integer> held() {
        return member.held();
    }

    @Override
    public boolean holds(int bucket) {
        return member.holds(bucket);
    }

    @Override
    public Step step() {
        ShardMember.Step s = member.step();
        return new Step(s.acquired(), s.lost(), s.excess());
    }

    @Override
    public void release(Collection<Integer> buckets) {
        member.release(buckets);
    }

    @Override
    public Set<Integer> lockHeld(Connection c, Collection<Integer> buckets) throws SQLException {
        return member.lockHeld(c, buckets);
    }

    @Override
    public void leave() {
        member.leave();
    }
}
