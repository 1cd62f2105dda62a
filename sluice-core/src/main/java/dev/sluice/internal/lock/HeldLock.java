package dev.sluice.internal.lock;

import dev.sluice.LockHandle;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.UUID;
import org.slf4j.LoggerFactory;

/** One acquisition of a lock: the name, its random token and its fencing token. */
final class HeldLock implements LockHandle {
    private final LockStore store;
    private final String name;
    private final String owner;
    private final UUID token;
    private final long fencingToken;
    private volatile Instant expiresAt;

    HeldLock(LockStore store, String name, String owner, UUID token, long fencingToken, Instant expiresAt) {
        this.store = store;
        this.name = name;
        this.owner = owner;
        this.token = token;
        this.fencingToken = fencingToken;
        this.expiresAt = expiresAt;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String owner() {
        return owner;
    }

    @Override
    public long fencingToken() {
        return fencingToken;
    }

    @Override
    public Instant expiresAt() {
        return expiresAt;
    }

    @Override
    public boolean renew(Duration ttl) {
        LockStore.checkTtl(Objects.requireNonNull(ttl, "ttl"));
        Instant until = store.renew(name, token, ttl);
        if (until == null) {
            return false;
        }
        expiresAt = until;
        return true;
    }

    @Override
    public boolean release() {
        return store.release(name, token);
    }

    @Override
    public void close() {
        try {
            release();
        } catch (RuntimeException e) {
            // The lock lapses at its expiry anyway; closing must not mask the caller's own exception.
            LoggerFactory.getLogger(HeldLock.class).warn("releasing lock failed; it expires by itself: lock={} error={}",
                    name, e.toString());
        }
    }

    @Override
    public String toString() {
        return "LockHandle[" + name + " #" + fencingToken + "]";
    }
}
