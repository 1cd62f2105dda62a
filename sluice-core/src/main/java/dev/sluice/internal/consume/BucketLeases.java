package dev.sluice.internal.consume;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Collection;
import java.util.Set;

/**
 * What a partitioned group's member needs of its shard leases (the fleet's {@code shard_lease} rows, kept by
 * {@code internal.shard}): the buckets it holds by its own clock, the rebalancing step, the giving back of
 * buckets, and the commit guard. The consumer calls {@link #step} from its own loop when told to.
 */
public interface BucketLeases {
    /** What one rebalancing step changed: buckets taken, buckets found lost, buckets above the fair share. */
    record Step(Set<Integer> acquired, Set<Integer> lost, Set<Integer> excess) {
    }

    /** The buckets held now whose lease has not run out by this process's clock. */
    Set<Integer> held();

    /** Whether {@code bucket} is held and its lease has not run out by this process's clock. */
    boolean holds(int bucket);

    /** Claims free or expired buckets one at a time up to the fair share; reports losses and the excess. */
    Step step();

    /** Gives buckets back (their in-flight work finished and committed), in a transaction of its own. */
    void release(Collection<Integer> buckets);

    /**
     * The commit guard, in the caller's transaction: locks the rows of the buckets still held and live (so that a
     * takeover waits for this commit) and returns those buckets.
     */
    Set<Integer> lockHeld(Connection c, Collection<Integer> buckets) throws SQLException;

    /** Gives back everything still held and stops (idempotent). */
    void leave();
}
