package dev.sluice.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reads who owns a partitioned group's buckets, straight from {@code shard_lease} (and the owners' fleet instances
 * in {@code worker_instance}, whose {@code holder} is the owning client's id), for {@link RebalanceBenchmark}.
 */
final class ShardWatch {
    private final Connection admin;
    private final String sql;
    private final long groupId;
    private final int buckets;

    ShardWatch(Connection admin, String schema, long groupId, int buckets) {
        this.admin = admin;
        this.groupId = groupId;
        this.buckets = buckets;
        String q = Bench.quote(schema);
        // Per bucket: its owner's client id when the bucket's lease and the owner's fleet instance are both live.
        this.sql = "SELECT s.bucket, CASE WHEN s.owner_token IS NOT NULL AND s.lease_expires_at > now()"
                + " AND i.expires_at > now() THEN i.holder END FROM " + q + ".shard_lease s LEFT JOIN " + q
                + ".worker_instance i ON i.id = s.owner_instance_id WHERE s.consumer_group_id = ? ORDER BY s.bucket";
    }

    /**
     * What one read saw.
     *
     * @param rows      the group's rows in shard_lease (must be the bucket count)
     * @param owners    live buckets per owning client id (any client, live or not as far as the benchmark knows)
     * @param ownedLive buckets whose live owner is among {@code live}
     * @param fairShare ceil(buckets / live members)
     */
    record State(int rows, Map<String, Integer> owners, int ownedLive, int fairShare, int buckets) {
        /** Every bucket owned by a live member, none holding more than its fair share. */
        boolean balanced() {
            return rows == buckets && ownedLive == buckets && owners.values().stream().allMatch(n -> n <= fairShare);
        }

        int heldBy(String member) {
            return owners.getOrDefault(member, 0);
        }
    }

    State read(List<String> live) throws SQLException {
        int rows = 0;
        int ownedLive = 0;
        Map<String, Integer> owners = new TreeMap<>();
        try (PreparedStatement ps = admin.prepareStatement(sql)) {
            ps.setLong(1, groupId);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows++;
                    String holder = rs.getString(2);
                    if (holder != null) {
                        owners.merge(holder, 1, Integer::sum);
                        if (live.contains(holder)) {
                            ownedLive++;
                        }
                    }
                }
            }
        }
        int fair = (buckets + live.size() - 1) / live.size();
        return new State(rows, owners, ownedLive, fair, buckets);
    }
}
