package dev.sluice.internal.consume;

import dev.sluice.ConcurrencyPolicy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Key leases of the {@code ordered} and {@code exclusive} policies ({@link KeyLeaseSql}). */
final class KeyedLeases implements KeyLeases {
    private final ConsumerContext ctx;
    private final KeyLeaseSql sql;
    private final String channel;

    KeyedLeases(ConsumerContext ctx, String channel) {
        this.ctx = ctx;
        this.sql = ctx.sql.keys;
        this.channel = channel;
    }

    @Override
    public boolean keyed() {
        return true;
    }

    @Override
    public Set<String> acquire(RangeWork w, Map<String, List<Fetched>> chains) {
        if (chains.isEmpty()) {
            return Set.of();
        }
        return ctx.db.transaction("take key leases", c -> {
            Set<String> held = take(c, chains);
            if (!held.isEmpty()) {
                // ordered: an unresolved earlier message blocks the key; exclusive: an earlier row of the key
                // that is due and waiting goes first (else fresh ranges could take a busy key ahead of it forever).
                Set<String> blocked = ctx.policy == ConcurrencyPolicy.ORDERED ? blocked(c, held, chains, w.leaseId)
                        : waiting(c, held, chains);
                if (!blocked.isEmpty()) {
                    release(c, blocked);
                    held.removeAll(blocked);
                }
            }
            w.keys.addAll(held);
            return held;
        });
    }

    @Override
    public boolean acquireRow(Fetched f) {
        String key = f.messageKey();
        if (key == null) {
            return true;
        }
        return ctx.db.transaction("take a key lease", c -> {
            Map<String, List<Fetched>> one = Map.of(key, List.of(f));
            Set<String> held = take(c, one);
            if (held.isEmpty()) {
                return false;
            }
            if (ctx.policy == ConcurrencyPolicy.ORDERED && !blocked(c, held, one, -1).isEmpty()) {
                release(c, held);
                return false;
            }
            return true;
        });
    }

    @Override
    public void releaseRow(String key) {
        if (key == null) {
            return;
        }
        ctx.db.transaction("release a key lease", c -> {
            release(c, Set.of(key));
            wakeNext(c, Set.of(key));
            return null;
        });
    }

    @Override
    public boolean handsOn() {
        return true;
    }

    @Override
    public boolean blockedIn(Connection c, String key, long id) throws SQLException {
        return ctx.policy == ConcurrencyPolicy.ORDERED
                && !blocked(c, List.of(key), new Long[] {id}, -1).isEmpty();
    }

    @Override
    public void releaseIn(Connection c, String key) throws SQLException {
        release(c, Set.of(key));
        wakeNext(c, Set.of(key));
    }

    private Set<String> take(Connection c, Map<String, List<Fetched>> chains) throws SQLException {
        List<String> keys = new ArrayList<>(chains.keySet());
        Long[] ids = keys.stream().map(k -> chains.get(k).get(0).id()).toArray(Long[]::new);
        Set<String> held = new HashSet<>();
        try (PreparedStatement ps = c.prepareStatement(sql.acquireKeys)) {
            ps.setLong(1, ctx.groupId());
            ps.setObject(2, ctx.token);
            ps.setDouble(3, ctx.leaseSeconds);
            ps.setArray(4, c.createArrayOf("text", keys.toArray()));
            ps.setArray(5, c.createArrayOf("int8", ids));
            ps.setLong(6, ctx.groupId());
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    held.add(rs.getString(1));
                }
            }
        }
        return held;
    }

    /** Ordered: the keys with an unresolved earlier message ({@link KeyLeaseSql#blockedKeys}). */
    private Set<String> blocked(Connection c, Set<String> keys, Map<String, List<Fetched>> chains, long ownLease)
            throws SQLException {
        List<String> list = new ArrayList<>(keys);
        return blocked(c, list, list.stream().map(k -> chains.get(k).get(0).id()).toArray(Long[]::new), ownLease);
    }

    /** Ordered: those of {@code list} (each with its first id) with an unresolved earlier message. */
    private Set<String> blocked(Connection c, List<String> list, Long[] firsts, long ownLease) throws SQLException {
        return heldBack(c, sql, ConcurrencyPolicy.ORDERED, ctx.groupId(), ownLease, list, firsts);
    }

    /** Exclusive: the keys an earlier waiting message should get first ({@link KeyLeaseSql#waitingKeys}). */
    private Set<String> waiting(Connection c, Set<String> keys, Map<String, List<Fetched>> chains) throws SQLException {
        List<String> list = new ArrayList<>(keys);
        Long[] firsts = list.stream().map(k -> chains.get(k).get(0).id()).toArray(Long[]::new);
        return heldBack(c, sql, ConcurrencyPolicy.EXCLUSIVE, ctx.groupId(), -1, list, firsts);
    }

    /**
     * The keys of {@code list} (each with its first id) that an earlier message holds back: for {@code ordered}
     * {@link KeyLeaseSql#blockedKeys} (ranges other than {@code ownLease}), for {@code exclusive}
     * {@link KeyLeaseSql#waitingKeys}. Two statements in the caller's transaction: the lowest open range below the
     * highest first id, then the check bounded by it and that id as constants.
     */
    static Set<String> heldBack(Connection c, KeyLeaseSql sql, ConcurrencyPolicy policy, long group, long ownLease,
                                List<String> list, Long[] firsts) throws SQLException {
        boolean ordered = policy == ConcurrencyPolicy.ORDERED;
        long high = highest(firsts);
        long floor = high; // no range below: the check reads no partition of the log
        try (PreparedStatement ps = c.prepareStatement(ordered ? sql.blockedFloor : sql.waitingFloor)) {
            ps.setLong(1, group);
            ps.setLong(2, group);
            ps.setLong(3, high);
            if (ordered) {
                ps.setLong(4, ownLease);
            }
            try (ResultSet rs = ps.executeQuery()) {
                if (rs.next()) {
                    long low = rs.getLong(1);
                    if (!rs.wasNull()) {
                        floor = low;
                    }
                }
            }
        }
        Set<String> held = new HashSet<>();
        try (PreparedStatement ps = c.prepareStatement(ordered ? sql.blockedKeys : sql.waitingKeys)) {
            int i = 1;
            ps.setLong(i++, group);
            ps.setLong(i++, group);
            if (ordered) {
                ps.setLong(i++, ownLease);
            }
            ps.setLong(i++, floor);
            ps.setLong(i++, high);
            java.sql.Array keys = c.createArrayOf("text", list.toArray());
            ps.setArray(i++, keys);
            ps.setArray(i++, keys);
            ps.setArray(i++, c.createArrayOf("int8", firsts));
            ps.setLong(i, group);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    held.add(rs.getString(1));
                }
            }
        }
        return held;
    }

    private static long highest(Long[] ids) {
        long h = 0;
        for (Long id : ids) {
            h = Math.max(h, id);
        }
        return h;
    }

    @Override
    public void release(Connection c, Set<String> keys) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.releaseKeys)) {
            ps.setLong(1, ctx.groupId());
            ps.setObject(2, ctx.token);
            ps.setArray(3, c.createArrayOf("text", keys.toArray()));
            ps.executeUpdate();
        }
    }

    @Override
    public void wakeNext(Connection c, Set<String> keys) throws SQLException {
        int woken;
        try (PreparedStatement ps = c.prepareStatement(ctx.sql.exceptions.wakeDeferred)) {
            ps.setLong(1, ctx.groupId());
            ps.setArray(2, c.createArrayOf("text", keys.toArray()));
            ps.setLong(3, ctx.groupId());
            woken = ps.executeUpdate();
        }
        if (woken > 0) {
            try (PreparedStatement ps = c.prepareStatement("SELECT pg_notify(?, ?)")) {
                ps.setString(1, channel);
                ps.setString(2, Long.toString(ctx.g.streamId()));
                ps.execute();
            }
        }
    }

    @Override
    public void renew(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.renewKeys)) {
            ps.setLong(1, ctx.groupId());
            ps.setObject(2, ctx.token);
            ps.setDouble(3, ctx.leaseSeconds);
            ps.executeUpdate();
        }
    }

    @Override
    public void releaseAll(Connection c) throws SQLException {
        Set<String> keys = new HashSet<>();
        try (PreparedStatement ps = c.prepareStatement(sql.releaseAllKeys)) {
            ps.setLong(1, ctx.groupId());
            ps.setObject(2, ctx.token);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    keys.add(rs.getString(1));
                }
            }
        }
        if (!keys.isEmpty()) {
            wakeNext(c, keys);
        }
    }
}
