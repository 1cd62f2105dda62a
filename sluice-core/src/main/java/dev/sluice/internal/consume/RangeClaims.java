package dev.sluice.internal.consume;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The range side of the claim path ({@link RangeSql}): the probe of an idle group, the fenced claim of a fresh
 * range with its messages, the wait for a pending observation, the takeover (or quarantine) of an expired range,
 * and a range's completion, release and renewal. Each method is one transaction (or one round trip).
 */
final class RangeClaims {
    /** The probe's answer: the cursor, the head, and when the next expired range or due row is. */
    record Probe(long claimed, long settledHead, boolean pending, long head, Instant nextLease, Instant nextDue,
                 Instant nextRowExpiry, Instant now) {
    }

    /**
     * A fenced claim's answer: the old and new claimed positions, whether an observation is pending, the new
     * lease (0: nothing claimed), the observed head, the bindings (json) with their head, and the messages.
     */
    record Claimed(long oldClaimed, long newClaimed, boolean pending, long leaseId, long observed,
                   String bindingsJson, long headWithBindings, List<Fetched> messages) {
        boolean claimed() {
            return leaseId != 0;
        }
    }

    /** What a takeover found. */
    sealed interface Reclaim {
        /** No expired range. */
        record None() implements Reclaim {
        }

        /** The range was reclaimed too often: its unresolved messages became exception rows. */
        record Quarantined() implements Reclaim {
        }

        /** The range, now this consumer's. */
        record Taken(RangeWork range) implements Reclaim {
        }
    }

    private final ConsumerContext ctx;
    private final RangeSql sql;

    /** The claims a consumer makes in a row while the cursor keeps outrunning its window; then it reports nothing claimed. */
    static final int MAX_WINDOW_MOVES = 4;

    /** The log window of this consumer's claims: moved to the cursor when the cursor has left it. */
    private volatile LogWindow window = LogWindow.from(0, 1);

    RangeClaims(ConsumerContext ctx) {
        this.ctx = ctx;
        this.sql = ctx.sql.ranges;
    }

    /** Read-only probe (no xid). */
    Probe probe() {
        return ctx.db.autoCommitReplayable("probe group", c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.probe)) {
                ps.setLong(1, ctx.groupId());
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        throw new dev.sluice.SluiceException(dev.sluice.ErrorCode.GROUP_NOT_FOUND,
                                "group '" + ctx.g.groupName() + "' has no cursor (destroyed?)");
                    }
                    return new Probe(rs.getLong(1), rs.getLong(2), rs.getBoolean(3), rs.getLong(4), instant(rs.getTimestamp(5)),
                            instant(rs.getTimestamp(6)), instant(rs.getTimestamp(7)), rs.getTimestamp(8).toInstant());
                }
            }
        });
    }

    private static Instant instant(Timestamp ts) {
        return ts == null ? null : ts.toInstant();
    }

    /**
     * The fenced claim of a fresh range with its messages, in one round trip ({@link RangeSql#claim}) — or two, when
     * the cursor has left the log window this consumer last saw (other consumers claimed past it, or the group was
     * rewound): the first answer names the cursor, and the claim is made again in the window from there.
     */
    Claimed claim() {
        Claimed r = null;
        for (int attempt = 0; attempt < MAX_WINDOW_MOVES; attempt++) {
            LogWindow w = window;
            r = claimIn(w);
            if (r.claimed() || w.holds(r.oldClaimed())) {
                window = r.claimed() && !w.holds(r.newClaimed()) ? LogWindow.from(r.newClaimed(), ctx.o.batchSize()) : w;
                return r;
            }
            window = LogWindow.from(r.oldClaimed(), ctx.o.batchSize());
        }
        return r;
    }

    private Claimed claimIn(LogWindow w) {
        return ctx.db.autoCommitReplayable("claim a range", c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.claim)) {
                sql.bindClaim(ps, ctx.groupId(), ctx.o.batchSize(), ctx.o.maxBytes(), ctx.token, ctx.leaseSeconds, w);
                ps.execute(); // statement 1: the observation
                if (!ps.getMoreResults()) {
                    throw new SQLException("the claim returned no second result");
                }
                try (ResultSet rs = ps.getResultSet()) {
                    return claimed(rs);
                }
            }
        });
    }

    private static Claimed claimed(ResultSet rs) throws SQLException {
        if (!rs.next()) {
            throw new dev.sluice.SluiceException(dev.sluice.ErrorCode.GROUP_NOT_FOUND, "the group has no cursor (destroyed?)");
        }
        long oldClaimed = rs.getLong(1);
        long newClaimed = rs.getLong(2);
        boolean pending = rs.getBoolean(3);
        long leaseId = rs.getLong(4);
        long observed = rs.getLong(5);
        String bindingsJson = rs.getString(6);
        long head = rs.getLong(7);
        List<Fetched> messages = new ArrayList<>();
        do {
            rs.getLong(8);
            if (!rs.wasNull()) {
                messages.add(Delivery.fetched(rs, 7));
            }
        } while (rs.next());
        return new Claimed(oldClaimed, newClaimed, pending, leaseId, observed, bindingsJson, head, messages);
    }

    /**
     * Whether the pending observation has settled (a read-only check, no xid); the consumer re-checks with a
     * short growing wait between polls rather than parking a shared scheduler thread.
     */
    boolean settled() {
        return ctx.db.autoCommitReplayable("check the fence", c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.settled)) {
                ps.setLong(1, ctx.groupId());
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() && rs.getBoolean(1);
                }
            }
        });
    }

    /** Takes over the lowest expired range, or quarantines it after too many reclaims. */
    Reclaim reclaim() {
        long sent = System.nanoTime();
        return ctx.db.transaction("reclaim a range", c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.reclaimRange)) {
                ps.setObject(1, ctx.token);
                ps.setDouble(2, ctx.leaseSeconds);
                ps.setLong(3, ctx.groupId());
                ps.setLong(4, ctx.groupId());
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        return new Reclaim.None();
                    }
                    long id = rs.getLong(1);
                    long low = rs.getLong(2);
                    long high = rs.getLong(3);
                    int reclaims = rs.getInt(4);
                    Long[] resolved = (Long[]) rs.getArray(5).getArray();
                    if (reclaims > ctx.g.config().maxRangeReclaims()) {
                        try (PreparedStatement q = c.prepareStatement(ctx.sql.exceptions.quarantine)) {
                            q.setLong(1, id);
                            q.setLong(2, ctx.groupId());
                            q.setString(3, ctx.policy.sqlValue());
                            q.setLong(4, low);
                            q.setLong(5, high);
                            int n = q.executeUpdate();
                            ConsumerContext.log.warn("range quarantined: group={} low={} high={} reclaims={} rows={}",
                                    ctx.g.groupName(), low, high, reclaims, n);
                        }
                        return new Reclaim.Quarantined();
                    }
                    return new Reclaim.Taken(new RangeWork(id, low, high, reclaims, new HashSet<>(Arrays.asList(resolved)),
                            sent + ctx.o.leaseTimeout().toNanos()));
                }
            }
        });
    }

    /**
     * Deletes the range's lease if this consumer still holds it (the caller's transaction); false when the lease
     * was lost. Nothing else is written: committed follows from the leases left ({@link RangeSql#committedNow}).
     */
    boolean complete(Connection c, RangeWork w) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.completeRange)) {
            ps.setLong(1, w.leaseId);
            ps.setObject(2, ctx.token);
            ps.setInt(3, w.reclaims);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    /** A range that leaves nothing behind: its completion is one statement ({@link #complete}). */
    boolean completeQuiet(RangeWork w) {
        // Replayable: a replay after an unseen commit finds its lease gone and reports the range lost,
        // which changes nothing (its messages were handled and committed is past them).
        return ctx.db.autoCommitReplayable("complete a range", c -> complete(c, w));
    }

    /**
     * Gives a range's lease back at once, keeping {@code resolved}: taken over now, and not counted as a reclaim unless
     * {@code unfinished} (a handler started here got no outcome, so its message is delivered again).
     */
    void release(Connection c, RangeWork w, Set<Long> resolved, boolean unfinished) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.releaseRange)) {
            ps.setBoolean(1, !unfinished);
            ps.setArray(2, c.createArrayOf("int8", resolved.toArray()));
            ps.setLong(3, w.leaseId);
            ps.setObject(4, ctx.token);
            ps.setInt(5, w.reclaims);
            ps.executeUpdate();
        }
    }

    /** Renews the ranges with their resolved ids; returns the lease ids still held. */
    Set<Long> renew(Connection c, Collection<RangeWork> open) throws SQLException {
        Set<Long> renewed = new HashSet<>();
        try (PreparedStatement ps = c.prepareStatement(sql.renewRanges)) {
            java.sql.Array ids = c.createArrayOf("int8", open.stream().map(w -> w.leaseId).toArray());
            ps.setDouble(1, ctx.leaseSeconds);
            ps.setArray(2, ids);
            ps.setArray(3, c.createArrayOf("text", open.stream().map(w -> arrayText(w.resolved)).toArray()));
            ps.setArray(4, c.createArrayOf("int4", open.stream().map(w -> w.reclaims).toArray()));
            ps.setArray(5, ids);
            ps.setObject(6, ctx.token);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    renewed.add(rs.getLong(1));
                }
            }
        }
        return renewed;
    }

    private static String arrayText(Set<Long> ids) {
        StringBuilder b = new StringBuilder("{");
        for (Long id : ids) {
            if (b.length() > 1) {
                b.append(',');
            }
            b.append(id);
        }
        return b.append('}').toString();
    }
}
