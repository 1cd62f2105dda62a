package dev.sluice.internal.consume;

import dev.sluice.ConcurrencyPolicy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Key leases of the keyed policies ({@code ordered}, {@code exclusive}): one in-flight delivery per message key
 * of a group (docs/consume.md, "key policies"). {@link #of} gives a no-op for {@code parallel}, which takes none
 * and needs no round trip for them.
 */
interface KeyLeases extends RowKeys {
    /** The implementation for the group's policy. */
    static KeyLeases of(ConsumerContext ctx, String channel) {
        return ctx.policy == ConcurrencyPolicy.PARALLEL ? None.INSTANCE : new KeyedLeases(ctx, channel);
    }


    /**
     * Takes the keys of a range's chains (key → its messages in id order) in one transaction; returns those
     * whose chain may run now and records them in the range. For ordered, a key with an unresolved earlier
     * message is given back; for exclusive, one an earlier waiting message should get first.
     */
    Set<String> acquire(RangeWork w, Map<String, List<Fetched>> chains);


    /** Lets go of some keys of this consumer, in the caller's transaction. */
    void release(Connection c, Set<String> keys) throws SQLException;

    /** Wakes, per key, the next deferred row waiting on it (and the other instances: one NOTIFY). */
    void wakeNext(Connection c, Set<String> keys) throws SQLException;

    /** Renews every key lease of this consumer, in the caller's transaction. */
    void renew(Connection c) throws SQLException;

    /** A clean stop: lets go of every key lease of this consumer and wakes their next rows. */
    void releaseAll(Connection c) throws SQLException;

    /** The {@code parallel} policy: no key leases, no statements. */
    final class None implements KeyLeases {
        static final None INSTANCE = new None();

        private None() {
        }

        @Override
        public boolean keyed() {
            return false;
        }

        @Override
        public Set<String> acquire(RangeWork w, Map<String, List<Fetched>> chains) {
            return chains.keySet();
        }

        @Override
        public boolean acquireRow(Fetched f) {
            return true;
        }

        @Override
        public void releaseRow(String key) {
        }

        @Override
        public void releaseIn(Connection c, String key) {
        }

        @Override
        public void release(Connection c, Set<String> keys) {
        }

        @Override
        public void wakeNext(Connection c, Set<String> keys) {
        }

        @Override
        public void renew(Connection c) {
        }

        @Override
        public void releaseAll(Connection c) {
        }
    }
}
