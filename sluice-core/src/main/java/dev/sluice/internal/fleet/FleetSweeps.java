package dev.sluice.internal.fleet;

import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.jdbc.Sql;
import java.time.Duration;

/** The manager's upkeep of the fleet tables: expired instances and old snapshots, in bounded batches. */
public final class FleetSweeps {
    /** Rows one statement deletes at most; a pass repeats full batches up to {@link #MAX_ROUNDS}. */
    static final int BATCH = 1_000;
    static final int MAX_ROUNDS = 10;

    private final Db db;
    private final WorkerSql sql;

    public FleetSweeps(Db db, WorkerConfigs configs) {
        this.db = db;
        this.sql = configs.sql();
    }

    /** Deletes instance rows whose lease expired (their snapshots stay); returns how many. */
    public long expiredInstances() {
        long total = 0;
        for (int round = 0; round < MAX_ROUNDS; round++) {
            int n = db.autoCommit("delete expired instances", c -> Sql.update(c, sql.deleteExpired, BATCH));
            total += n;
            if (n < BATCH) {
                break;
            }
        }
        return total;
    }

    /** Deletes instance snapshots kept longer than {@code keep} past their recorded expiry; returns how many. */
    public long snapshots(Duration keep) {
        double seconds = keep.toNanos() / 1e9;
        long total = 0;
        for (int round = 0; round < MAX_ROUNDS; round++) {
            int n = db.autoCommit("sweep instance snapshots", c -> Sql.update(c, sql.sweepSnapshots, seconds, BATCH));
            total += n;
            if (n < BATCH) {
                break;
            }
        }
        return total;
    }
}
