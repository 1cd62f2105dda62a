package dev.sluice.internal.fleet;

import dev.sluice.InstanceInfo;
import dev.sluice.InstanceState;
import dev.sluice.WorkerInfo;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.jdbc.Sql;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Optional;

/** Operator reads of the fleet: workers with their live counts, and instances with their state (small tables). */
public final class FleetReads {
    private final Db db;
    private final WorkerSql sql;

    public FleetReads(Db db, WorkerConfigs configs) {
        this.db = db;
        this.sql = configs.sql();
    }

    /** Every worker, system workers first, then groups by stream and name. */
    public List<WorkerInfo> workers() {
        return db.read("list workers", c -> Sql.list(c, sql.listWorkers, rs -> {
            int target = rs.getInt(5);
            int live = rs.getInt(7);
            return new WorkerInfo(key(rs, 2, 3, 4), target, live, target < 0 ? live : Math.min(live, target),
                    rs.getTimestamp(6).toInstant());
        }));
    }

    /** One worker by key, if it exists. */
    public Optional<WorkerInfo> worker(WorkerKey key) {
        String k = key.toString();
        return workers().stream().filter(w -> w.key().equals(k)).findFirst();
    }

    /** Every instance row (live, or expired and not cleaned up yet). */
    public List<InstanceInfo> instances() {
        return db.read("list instances", c -> Sql.list(c, sql.listInstances, rs -> {
            boolean live = rs.getBoolean(10);
            int target = rs.getInt(11);
            long earlier = rs.getLong(12);
            InstanceState state = !live ? InstanceState.EXPIRED
                    : target == 0 ? InstanceState.PAUSED
                    : target > 0 && earlier >= target ? InstanceState.STANDBY : InstanceState.ACTIVE;
            return new InstanceInfo(rs.getLong(1), key(rs, 2, 3, 4), rs.getString(5), state, rs.getInt(6),
                    rs.getTimestamp(7).toInstant(), rs.getTimestamp(8).toInstant(), rs.getTimestamp(9).toInstant());
        }));
    }

    /** The holder of the schema's active manager instance, if one is live. */
    public Optional<InstanceInfo> manager() {
        return instances().stream().filter(i -> i.worker().equals(WorkerKey.MANAGER) && i.state() == InstanceState.ACTIVE)
                .findFirst();
    }

    private static String key(ResultSet rs, int name, int stream, int group) throws SQLException {
        String n = rs.getString(name);
        String g = rs.getString(group);
        return g != null ? WorkerKey.consumer(rs.getString(stream), g).toString() : n;
    }
}
