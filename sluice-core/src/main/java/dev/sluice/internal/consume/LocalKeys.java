package dev.sluice.internal.consume;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The key "leases" of a partitioned group's member: a bucket has one owner, so the keys of its buckets are busy
 * only inside this process, and one in-flight delivery per key is kept in memory — no key-lease rows, no
 * statements. Waking the next deferred row of a key still goes through the exception queue (and a NOTIFY).
 */
final class LocalKeys implements RowKeys {
    private final Set<String> busy = ConcurrentHashMap.newKeySet();
    private final KeyedLeases wake;

    LocalKeys(ConsumerContext ctx, String channel) {
        this.wake = new KeyedLeases(ctx, channel);
    }

    /** Takes a key for a chain or a row; false while another delivery of it runs here. */
    boolean tryTake(String key) {
        return key == null || busy.add(key);
    }

    /** Lets go of a key taken with {@link #tryTake}. */
    void let(String key) {
        if (key != null) {
            busy.remove(key);
        }
    }

    @Override
    public boolean keyed() {
        return true;
    }

    @Override
    public boolean acquireRow(Fetched f) {
        // The row claim takes only the lowest unresolved row of a key, so order holds; the key must not be running
        // in a chain of a bucket batch at the same time.
        return tryTake(f.messageKey());
    }

    /** In-memory keys: let go at once, whatever the transaction does. */
    @Override
    public void releaseIn(java.sql.Connection c, String key) {
        releaseRow(key);
    }

    @Override
    public void releaseRow(String key) {
        if (key == null) {
            return;
        }
        let(key);
        wake.releaseRow(key); // no key-lease row to delete; wakes the next deferred row of the key
    }

    /** Wakes, per key, the next deferred row waiting on it (and the other instances: one NOTIFY). */
    void wakeNext(Connection c, Set<String> keys) throws SQLException {
        wake.wakeNext(c, keys);
    }

}
