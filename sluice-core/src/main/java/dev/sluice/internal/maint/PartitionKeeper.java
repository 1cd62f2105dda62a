package dev.sluice.internal.maint;

import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.schema.FamilyTables;
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
 * caller's open transaction can never wedge it. A database user without DDL rights is refused; the
 * keeper then stops trying ahead of time for a while (every try would fail the same way) and leaves
 * the extending to an admin ({@code sluice stream extend-partitions}).
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
    /** When this user was last refused DDL (System.nanoTime), 0 when it was not or has since succeeded. */
    private volatile long notPermittedAt;

    /** A keeper for one stream's log; no I/O until the first check. */
    public PartitionKeeper(Db db, String schema, FamilyTables tables, long partitionSize, Executor background) {
        this.db = db;
        this.schema = schema;
        this.tables = tables;
        this.partitionSize = partitionSize;
        this.background = background;
    }

    /** How an extension ended. */
    public enum Extension {
        /** The partitions now cover the head and the room ahead (possibly with nothing to create). */
        EXTENDED,
        /** This database user may not create tables in the schema (a least-privilege runtime role). */
        NOT_PERMITTED,
        /** Another failure: a busy DDL lock, an unreachable database. A later try may succeed. */
        FAILED
    }

    /** After a refusal for lack of rights, writes stop trying DDL ahead of time for this long. */
    private static final long NOT_PERMITTED_PAUSE_NANOS = 30_000_000_000L;

    /** Makes sure the partitions cover {@code upcoming} more ids past the highest id seen; synchronous when needed. */
    public void beforeWrite(int upcoming) {
        long covered = coveredUpTo;
        if ((covered < 0 || lastSeen + upcoming + Partitions.AHEAD_IDS / 2 >= covered) && !pausedForRights()) {
            extend(upcoming);
        }
    }

    /** Records the highest id just written and extends in the background when the end is near. */
    public void afterWrite(long highestId) {
        if (highestId > lastSeen) {
            lastSeen = highestId;
        }
        long margin = Math.max(partitionSize / 2, Partitions.AHEAD_IDS);
        if (highestId + margin >= coveredUpTo && !pausedForRights() && extending.compareAndSet(false, true)) {
            background.execute(() -> {
                try {
                    extend(0);
                } finally {
                    extending.set(false);
                }
            });
        }
    }

    /** A role without DDL rights would fail every try: after a refusal, only a missing partition tries again. */
    private boolean pausedForRights() {
        long refused = notPermittedAt;
        return refused != 0 && System.nanoTime() - refused < NOT_PERMITTED_PAUSE_NANOS;
    }

    /**
     * Creates partitions through the sequence's current value plus {@code upcoming} ids (and one more
     * partition). Failures (no DDL rights, busy lock) are logged, rate-limited, and returned rather
     * than thrown: the caller decides what the missing partition means for its write.
     */
    public synchronized Extension extend(int upcoming) {
        try {
            coveredUpTo = db.transaction("create partitions of " + tables.messageLog(), c -> {
                try (Statement s = c.createStatement()) {
                    s.execute("SET LOCAL lock_timeout = '2s'");
                }
                Partitions.lock(c, schema, tables.streamId());
                long head = Math.max(lastSeen, Partitions.head(c, tables));
                Partitions.ensureThrough(c, tables, partitionSize, head, head + upcoming);
                return Partitions.coveredUpTo(c, tables);
            });
            notPermittedAt = 0;
            return Extension.EXTENDED;
        } catch (RuntimeException e) {
            try {
                coveredUpTo = db.read("read partitions of " + tables.messageLog(), c -> Partitions.coveredUpTo(c, tables));
            } catch (RuntimeException ignored) {
                // The database is unreachable; the next write reports it.
            }
            long now = System.nanoTime();
            if (now - lastWarnNanos > 60_000_000_000L) {
                lastWarnNanos = now;
                log.warn("could not create log partitions ahead: table={} error={}", tables.messageLog(), e.getMessage());
            }
            if (e instanceof SluiceException se && se.code() == ErrorCode.PERMISSION_DENIED) {
                notPermittedAt = now == 0 ? 1 : now;
                return Extension.NOT_PERMITTED;
            }
            return Extension.FAILED;
        }
    }

    /** The exclusive upper bound of the partitions this keeper knows exist (-1 before the first check). */
    public long coveredUpTo() {
        return coveredUpTo;
    }
}
