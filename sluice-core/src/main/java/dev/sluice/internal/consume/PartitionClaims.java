package dev.sluice.internal.consume;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The statements a partitioned group's member runs on its buckets' positions ({@link PartitionSql}) and its claim:
 * the fenced observation and the fetch of its idle buckets in one round trip ({@link ConsumeSql#partitionClaim}).
 */
final class PartitionClaims {
    /**
     * A claim's answer: the settled head, whether an observation is pending, the observed head, the bindings with
     * their head, where the window of every requested bucket now ends ({@code high}), whether more may be waiting,
     * and the messages by bucket with the ids whose key was blocked.
     */
    record Claim(long settled, boolean pending, long observed, String bindingsJson, long head, long high, boolean more,
                 Map<Integer, List<Fetched>> byBucket, Set<Long> blocked, Map<Integer, Runs> runs) {
    }

    /**
     * The bucket's hand-outs without a commit before this claim: the highest id of each run (a holder's batches, each
     * continuing the last, from the bucket's position), highest first. A message was handed out once per top at or
     * above its id.
     */
    record Runs(long[] tops) {
        static final Runs NONE = new Runs(new long[0]);

        /** How often the message was handed out before. */
        int handedOut(long id) {
            int n = 0;
            for (long t : tops) {
                if (t >= id) {
                    n++;
                }
            }
            return n;
        }

        /** The attempt a message of the bucket is delivered as: one more than its earlier hand-outs. */
        int attempt(long id) {
            return handedOut(id) + 1;
        }

        /** Whether the message was handed out more often than {@code max} re-runs allow: it is quarantined. */
        boolean exhausted(long id, int max) {
            return handedOut(id) > max;
        }

        /** From the {@code run_tops} array as read (null or empty: none). */
        static Runs of(Long[] tops) {
            return tops == null || tops.length == 0 ? NONE
                    : new Runs(java.util.Arrays.stream(tops).mapToLong(Long::longValue).toArray());
        }
    }

    private final ConsumerContext ctx;
    private final ConsumeSql sql;
    private final int n;

    PartitionClaims(ConsumerContext ctx, int n) {
        this.ctx = ctx;
        this.sql = ctx.sql;
        this.n = n;
    }

    /**
     * Claims for the given idle buckets (bucket → position): everything of them above their positions up to the
     * settled head, at most a batch (and the byte budget) in id order. Writes the fence's cursor version and the mark
     * of every bucket it hands messages of ({@link PartitionSql#fetch}).
     */
    Claim claim(Map<Integer, Long> idle) {
        Integer[] buckets = idle.keySet().toArray(Integer[]::new);
        Long[] pos = new Long[n];
        Arrays.fill(pos, Long.MAX_VALUE);
        long lowest = Long.MAX_VALUE;
        for (Map.Entry<Integer, Long> e : idle.entrySet()) {
            pos[e.getKey()] = e.getValue();
            lowest = Math.min(lowest, e.getValue());
        }
        int batch = ctx.o.batchSize();
        LogWindow window = LogWindow.from(lowest, batch);
        return ctx.db.autoCommitReplayable("claim buckets", c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.partitionClaim)) {
                ps.setString(1, sql.ranges.cursorLockKey(ctx.groupId()));
                ps.setLong(2, ctx.groupId());
                PartitionSql.bindFetch(ps, 3, c, n, buckets, pos, window, batch, ctx.o.maxBytes(), ctx.groupId());
                ps.execute(); // statement 1: the observation
                if (!ps.getMoreResults()) {
                    throw new SQLException("the claim returned no second result");
                }
                boolean pending;
                long observed;
                String bindings;
                long head;
                try (ResultSet rs = ps.getResultSet()) {
                    if (!rs.next()) {
                        throw new dev.sluice.SluiceException(dev.sluice.ErrorCode.GROUP_NOT_FOUND,
                                "group '" + ctx.g.groupName() + "' has no cursor (destroyed?)");
                    }
                    pending = rs.getBoolean(2);
                    observed = rs.getLong(3);
                    bindings = rs.getString(4);
                    head = rs.getLong(5);
                }
                if (!ps.getMoreResults()) {
                    throw new SQLException("the claim returned no third result");
                }
                try (ResultSet rs = ps.getResultSet()) {
                    return read(rs, pending, observed, bindings, head, batch, window.reach());
                }
            }
        });
    }

    private static Claim read(ResultSet rs, boolean pending, long observed, String bindings, long head, int batch, long reach)
            throws SQLException {
        Map<Integer, List<Fetched>> byBucket = new HashMap<>();
        Map<Integer, Runs> runs = new HashMap<>();
        Set<Long> blocked = new HashSet<>();
        long settled = 0;
        long matched = 0;
        long maxMatched = 0;
        Long cut = null;
        boolean first = true;
        while (rs.next()) {
            if (first) {
                settled = rs.getLong(1);
                matched = rs.getLong(2);
                maxMatched = rs.getLong(3);
                long c = rs.getLong(4);
                cut = rs.wasNull() ? null : c;
                first = false;
            }
            rs.getLong(7);
            if (rs.wasNull()) {
                continue;
            }
            int bucket = rs.getInt(5);
            Fetched f = Delivery.fetched(rs, 6);
            if (rs.getBoolean(6)) {
                blocked.add(f.id());
            }
            byBucket.computeIfAbsent(bucket, b -> new ArrayList<>()).add(f);
            if (!runs.containsKey(bucket)) {
                java.sql.Array a = rs.getArray("bucket_run_tops");
                runs.put(bucket, Runs.of(a == null ? null : (Long[]) a.getArray()));
            }
        }
        long high;
        boolean more;
        if (cut != null) {
            high = cut;
            more = true;
        } else if (matched >= batch) {
            high = maxMatched;
            more = true;
        } else {
            // Everything of the buckets up to here matched: the settled head, or the window's reach below it.
            high = Math.min(settled, reach);
            more = reach < settled;
        }
        return new Claim(settled, pending, observed, bindings, head, high, more, byBucket, blocked, runs);
    }

    /** The current positions of some buckets (bucket → position). */
    Map<Integer, Long> positions(Collection<Integer> buckets) {
        return ctx.db.autoCommitReplayable("read bucket positions", c -> {
            Map<Integer, Long> out = new HashMap<>();
            try (PreparedStatement ps = c.prepareStatement(sql.partitions.positions)) {
                ps.setArray(1, c.createArrayOf("int4", buckets.toArray()));
                ps.setLong(2, ctx.groupId());
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        out.put(rs.getInt(1), rs.getLong(2));
                    }
                }
            }
            return out;
        });
    }

    /** Moves buckets forward (bucket → new position), in the caller's transaction (under the commit guard). */
    void advance(Connection c, Map<Integer, Long> positions) throws SQLException {
        if (positions.isEmpty()) {
            return;
        }
        Integer[] buckets = positions.keySet().toArray(Integer[]::new);
        Long[] pos = new Long[buckets.length];
        for (int i = 0; i < buckets.length; i++) {
            pos[i] = positions.get(buckets[i]);
        }
        try (PreparedStatement ps = c.prepareStatement(sql.partitions.advance)) {
            ps.setArray(1, c.createArrayOf("int4", buckets));
            ps.setArray(2, c.createArrayOf("int8", pos));
            ps.setLong(3, ctx.groupId());
            ps.setLong(4, ctx.groupId());
            ps.execute();
        }
    }
}
