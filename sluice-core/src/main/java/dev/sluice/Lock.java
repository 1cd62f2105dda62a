package dev.sluice;

import dev.sluice.internal.catalog.Names;
import dev.sluice.internal.lock.LockStore;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * A handle on a named TTL lock ({@code sluice.lock(name)}). Creating it does no I/O and cannot fail; the
 * name is checked by {@link #tryAcquire}. Locks are not transactional: acquisition, renewal and release
 * each commit at once, independently of any transaction of the caller. The clock is the database's.
 *
 * <pre>{@code
 * Optional<LockHandle> held = sluice.lock("nightly-report").tryAcquire(Duration.ofMinutes(5));
 * held.ifPresent(lock -> {
 *     try (lock) {
 *         writeReport(lock.fencingToken());
 *     }
 * });
 * }</pre>
 */
public final class Lock {
    private final Sluice sluice;
    private final String name;

    Lock(Sluice sluice, String name) {
        this.sluice = sluice;
        this.name = name;
    }

    /** The lock's name as given to the handle. */
    public String name() {
        return name;
    }

    /**
     * Takes the lock for {@code ttl} if it is free (never taken, released, or expired), with a fencing
     * token one higher than the previous acquisition's; empty when someone holds it.
     *
     * @throws SluiceException {@link ErrorCode#INVALID_NAME}, {@link ErrorCode#INVALID_LOCK_OPTIONS} (ttl not
     *                         positive or over 30 days) before any round trip;
     *                         {@link ErrorCode#SYSTEM_NOT_REGISTERED} when the control plane is not installed and the
     *                         client was built with {@code migrate(false)} (otherwise the first use installs it)
     */
    public Optional<LockHandle> tryAcquire(Duration ttl) {
        Names.validate("lock", name);
        LockStore.checkTtl(Objects.requireNonNull(ttl, "ttl"));
        sluice.engine().requireControlPlane();
        return sluice.engine().lockStore().tryAcquire(name, sluice.clientId(), ttl);
    }

    @Override
    public String toString() {
        return "Lock[" + name + "]";
    }
}
