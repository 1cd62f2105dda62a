package dev.sluice.internal.maint;

import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.schema.FamilyTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps {@code message_log_<id>} partitions ahead of what a producing process writes. Before a write
 * it checks (in memory) that the known partitions cover the ids the write may draw and, if not,
 * creates more synchronously in a short DDL transaction of its own; after a write that came within
 * half a partition of the end it extends in the background. DDL waits at most 2 s for its locks, so a
 * caller's open transaction can never wedge it.
 */
public final class PartitionKeeper {
    private static final Logger log = LoggerFactory.getLogger(PartitionKeeper.class);

    private final Db db;
    private final String schema;
    private final FamilyTables tables;
    private final long partitionSize;
    private final Executor background;
    private final AtomicBoolean extending = new AtomicBoolean();
    private volatile long coveredUpTo = -1;
    private volatile long lastSeen;
    private volatile long lastWarnNanos;

    public PartitionKeeper(Db db, String schema, FamilyTables tables, long partitionSize, Executor background) {
        this.db = db;
        this.schema = schema;
        this.tables = tables;
        this.partitionSize = partitionSize;
        this.background = background;
    }

    /** Makes sure the partitions cover {@code upcoming} more ids past the highest id seen; synchronous when needed. */
    public void beforeWrite(int upcoming) {
        long covered = coveredUpTo;
        if (covered < 0 || lastSeen + upcoming + Partitions.AHEAD_IDS / 2 >= covered) {
            extend(upcoming);
        }
    }

    /** Records the highest id just written and extends in the background when the end is near. */
    public void afterWrite(long highestId) {
        if (highestId > lastSeen) {
            lastSeen = highestId;
        }
        long margin = Math.max(partitionSize / 2, Partitions.AHEAD_IDS);
        if (highestId + margin >= coveredUpTo && extending.compareAndSet(false, true)) {
            background.execute(() -> {
                try {
                    extend(0);
                } finally {
                    extending.set(false);
                }
            });
        }
    }

    /**
     * Creates partitions through the sequence's current value plus {@code upcoming} ids (and one more
     * partition). Failures (no DDL rights, busy lock) are logged, rate-limited, and not thrown: the
     * insert itself reports a missing partition.
     */
    public synchronized void extend(int upcoming) {
        try {
            coveredUpTo = db.transaction("create partitions of " + tables.messageLog(), c -> {
                try (Statement s = c.createStatement()) {
                    s.execute("SET LOCAL lock_timeout = '2s'");
                }
                try (PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))")) {
                    ps.setString(1, "sluice.partitions:" + schema + ":" + tables.streamId());
                    ps.execute();
                }
                long head = Math.max(lastSeen, sequenceValue(c));
                Partitions.ensureThrough(c, tables, partitionSize, head, head + upcoming);
                return Partitions.coveredUpTo(c, tables);
            });
        } catch (RuntimeException e) {
            try {
                coveredUpTo = db.autoCommit("read partitions of " + tables.messageLog(), c -> Partitions.coveredUpTo(c, tables));
            } catch (RuntimeException ignored) {
                // The database is unreachable; the next write reports it.
            }
            long now = System.nanoTime();
            if (now - lastWarnNanos > 60_000_000_000L) {
                lastWarnNanos = now;
                log.warn("could not create log partitions ahead: table={} error={}", tables.messageLog(), e.getMessage());
            }
        }
    }

    private long sequenceValue(Connection c) throws SQLException {
        try (Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT " + tables.headExpression())) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** The exclusive upper bound of the partitions this keeper knows exist (-1 before the first check). */
    public long coveredUpTo() {
        return coveredUpTo;
    }
}
