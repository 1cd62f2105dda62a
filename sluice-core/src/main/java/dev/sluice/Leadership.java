package dev.sluice;

import java.util.OptionalLong;

/**
 * A running leader election on one lock ({@code sluice.leader(name, ttl, listener)}): it keeps trying
 * to take the lock, renews it every third of the TTL while leading, and tells its {@link LeaderListener}.
 * At most one contender among all processes leads at a time, as long as a process notices a failed
 * renewal before the TTL runs out (it gives up leadership a little before its lock can expire).
 * {@link #close()} stops, releases the lock when held (so another contender takes over at once) and
 * calls {@link LeaderListener#onRevoked()} when it was leading.
 */
public interface Leadership extends AutoCloseable {

    /** The lock's name. */
    String name();

    /** Whether this contender leads now (the lock held and not about to expire). */
    boolean isLeader();

    /** The fencing token of the current leadership, or empty when not leading. */
    OptionalLong fencingToken();

    /** Stops contending; releases the lock if held. Idempotent. */
    @Override
    void close();
}
