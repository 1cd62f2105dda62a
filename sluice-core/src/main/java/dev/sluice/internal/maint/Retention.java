package dev.sluice.internal.maint;

import dev.sluice.StreamConfig;
import dev.sluice.StreamInfo;
import dev.sluice.internal.consume.ConsumeSweeps;
import dev.sluice.internal.consume.SnapshotFence;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.jdbc.Sql;
import dev.sluice.internal.schema.FamilyTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One retention pass over one stream: drops whole {@code message_log_<id>} partitions, lowest first, that
 * <ul>
 *   <li>lie entirely below the head's partition (never the head's, never one ahead);</li>
 *   <li>lie entirely at or below every group's committed position, unless {@code allowDropPastCommitted};</li>
 *   <li>are final: at or below a settled snapshot-fence observation, so no open producer can still commit into them;</li>
 *   <li>hold only messages older than the retention;</li>
 *   <li>hold no exception row of any group (ready, deferred, inflight, dead) and overlap no range lease.</li>
 * </ul>
 * The first look runs in auto-commit statements (a fence observation that has not settled is kept for the next
 * pass). Each drop then re-checks every condition that can change under retention's advisory lock on the stream and
 * detaches the partition {@code CONCURRENTLY} — never locking the log's parent against producers or consumers — and
 * drops it ({@link #drop}); a detach cut short is completed, and a detached leftover dropped, at the next pass.
 */
final class Retention {
    private static final Logger log = LoggerFactory.getLogger(Retention.class);

    private enum Drop { DROPPED, KEPT, BUSY }

    /** How long a concurrent detach (and the drop after it) waits for the transactions using the log. */
    static final Duration DETACH_WAIT = Duration.ofSeconds(3);

    private final Db db;
    private final StreamInfo stream;
    private final StreamState st;
    private final JanitorLimits limits;
    private final FamilyTables t;
    private final long size;
    private final Duration retention;
    private final boolean allowPastCommitted;

    Retention(Db db, StreamInfo stream, StreamState st, JanitorLimits limits) {
        this.db = db;
        this.stream = stream;
        this.st = st;
        this.limits = limits;
        this.t = st.tables;
        StreamConfig c = stream.config();
        this.size = c.partitionSize();
        this.retention = c.retention();
        this.allowPastCommitted = c.allowDropPastCommitted();
    }

    /** Drops what may go; returns the number of partitions dropped and leaves the stream's memo for the next pass. */
    long run(long head, Instant now) {
        Plan plan = db.autoCommit("plan retention of stream '" + stream.name() + "'", c -> plan(c, head, now));
        long dropped = 0;
        for (long index : plan.leftovers) {
            dropLeftover(index);
        }
        List<Partitions.Bound> work = new ArrayList<>(plan.pending);
        work.addAll(plan.droppable);
        for (Partitions.Bound b : work) {
            if (dropped == limits.maxRounds()) {
                memo(now, 0); // more next pass
                return dropped;
            }
            Drop d = drop(b);
            if (d == Drop.BUSY) {
                log.debug("retention: log lock busy, retried next pass: stream={} stream_id={} partition={}",
                        stream.name(), stream.id(), b.table());
                memo(now, 0);
                return dropped;
            }
            if (d == Drop.DROPPED) {
                dropped++;
            } else {
                plan.held = true; // something appeared under the lock
            }
        }
        if (plan.notBefore != null) {
            memo(plan.held ? min(plan.notBefore, now.plus(limits.recheck())) : plan.notBefore, 0);
        } else if (plan.held || plan.needHead == Long.MAX_VALUE) {
            memo(now.plus(limits.recheck()), 0);
        } else {
            memo(null, plan.needHead);
        }
        return dropped;
    }

    private void memo(Instant notBefore, long needHead) {
        st.retention = new StreamState.RetentionMemo(retention, allowPastCommitted, notBefore, needHead);
    }

    private static Instant min(Instant a, Instant b) {
        return a.isBefore(b) ? a : b;
    }

    /** The first look: which partitions may go now, and, for the memo, what holds the rest. */
    private static final class Plan {
        final List<Partitions.Bound> droppable = new ArrayList<>();
        /** Partitions whose concurrent detach was cut short (a timeout, a crash): completed and dropped first. */
        final List<Partitions.Bound> pending = new ArrayList<>();
        /** Partition indexes detached but not dropped (the process died between the two): dropped first. */
        final List<Long> leftovers = new ArrayList<>();
        /** A group, an exception row or a lease holds a partition that retention would otherwise consider. */
        boolean held;
        /** Set when the look stopped at a young partition (or must come again soon): the next look's time. */
        Instant notBefore;
        /** The head the log must reach before the lowest partition not considered is below the head's. */
        long needHead;
    }

    private Plan plan(Connection c, long head, Instant now) throws SQLException {
        Plan plan = new Plan();
        List<Partitions.Bound> below = new ArrayList<>();
        long lowestAbove = Long.MAX_VALUE;
        List<Partitions.Bound> bounds = Partitions.bounds(c, t);
        // Only below the lowest partition: a table above may be one being created (CREATE, then ATTACH).
        long lowestIndex = bounds.stream().filter(this::ours).mapToLong(b -> b.low() / size).min().orElse(-1);
        for (long index : leftovers(c)) {
            if (index < lowestIndex) {
                plan.leftovers.add(index);
            }
        }
        for (Partitions.Bound b : bounds) {
            if (!ours(b)) {
                continue;
            }
            if (b.detachPending()) {
                plan.pending.add(b); // already out of every query: the decision was made
                continue;
            }
            if (b.high() <= head) {
                below.add(b);
            } else {
                lowestAbove = Math.min(lowestAbove, b.high());
            }
        }
        plan.needHead = lowestAbove;
        if (below.isEmpty()) {
            return plan;
        }
        List<Partitions.Bound> candidates = below;
        if (!allowPastCommitted) {
            OptionalLong committed = st.consume.lowestCommitted(c, stream.id());
            if (committed.isPresent()) {
                candidates = new ArrayList<>();
                for (Partitions.Bound b : below) {
                    if (b.high() - 1 <= committed.getAsLong()) {
                        candidates.add(b);
                    } else {
                        plan.held = true;
                    }
                }
            }
        }
        if (candidates.isEmpty()) {
            return plan;
        }
        // Final content: once an observation of the head has settled, nothing can still commit an id at or below it
        // (docs/fence.md), so the age read below cannot be overtaken by a late producer. Unsettled: next pass.
        SnapshotFence.Observation o = st.retentionObservation != null ? st.retentionObservation : SnapshotFence.observe(c, t);
        if (!SnapshotFence.settled(c, o)) {
            st.retentionObservation = o; // looked at again next pass
            plan.notBefore = now;
            return plan;
        }
        st.retentionObservation = null;
        for (Partitions.Bound b : candidates) {
            if (b.high() > o.head()) {
                plan.notBefore = now;
                break;
            }
            Instant youngUntil = youngUntil(c, b, now);
            if (youngUntil != null) {
                // Later partitions are younger still: look again when this one can have aged out.
                plan.notBefore = youngUntil;
                break;
            }
            ConsumeSweeps.Hold h = st.consume.hold(c, stream.id(), b.low(), b.high());
            if (h.exceptionRows() || h.leases()) {
                plan.held = true; // a retry, a dead letter or an open range keeps this partition; the next may go
                continue;
            }
            plan.droppable.add(b);
        }
        return plan;
    }

    /** Null when every message of the partition is older than the retention; else when to look again. */
    private Instant youngUntil(Connection c, Partitions.Bound b, Instant now) throws SQLException {
        try (PreparedStatement ps = Sql.bind(c.prepareStatement(st.retentionSql.age), b.low(), b.high(),
                retention.toNanos() / 1e9, b.low(), b.high()); ResultSet rs = ps.executeQuery()) {
            rs.next();
            if (!rs.getBoolean(1)) {
                return null;
            }
            Timestamp last = rs.getTimestamp(2);
            Instant at = last == null ? null : last.toInstant().plus(retention);
            // A long producer transaction can leave an older time on the highest id: then simply look again later.
            return at != null && at.isAfter(now) ? at : now.plus(limits.recheck());
        }
    }

    /** Whether a catalog partition is one this code made: the name and bounds of partition {@code low / size}. */
    private boolean ours(Partitions.Bound b) {
        if (b.low() < 0 || b.low() % size != 0) {
            return false;
        }
        long index = b.low() / size;
        String name = t.messageLogPartition(index);
        return name.substring(name.lastIndexOf('.') + 1).equals(b.table())
                && (b.high() == Long.MAX_VALUE || b.high() - b.low() == size);
    }

    /**
     * One partition's drop. Under retention's session lock on the stream (a rewind takes its shared side first, so no
     * group moves back meanwhile), every condition that can change is re-checked — still attached, no exception row,
     * no lease, every group committed past it — and the partition is detached {@code CONCURRENTLY} and dropped.
     * Nothing here takes the log's parent in a mode that blocks producers or consumers: a detach that had to lock the
     * parent exclusively never got it while producer transactions overlapped (the hour-long lab run dropped nothing
     * in eight minutes), and every statement on the log queued behind its wait. The detach waits only for the
     * transactions that were using the log, at most {@link #DETACH_WAIT}; one cut short leaves the partition
     * detach-pending (out of every query already), completed at the next pass.
     */
    private Drop drop(Partitions.Bound b) {
        long index = b.low() / size;
        String key = t.retentionLockKey();
        Drop d = db.autoCommit("drop partition " + b.table() + " of stream '" + stream.name() + "'", c -> {
            if (!advisory(c, RetentionSql.TRY_LOCK, key)) {
                return Drop.BUSY; // a rewind of one of its groups, or another janitor
            }
            try {
                if (!b.detachPending()) {
                    if (!attached(c, index)) {
                        return Drop.KEPT; // another janitor dropped it meanwhile
                    }
                    ConsumeSweeps.Hold h = st.consume.hold(c, stream.id(), b.low(), b.high());
                    if (h.exceptionRows() || h.leases()) {
                        return Drop.KEPT;
                    }
                    if (!allowPastCommitted && h.lowestCommitted().isPresent() && b.high() - 1 > h.lowestCommitted().getAsLong()) {
                        return Drop.KEPT; // a rewind moved a group back into it
                    }
                }
                String detach = b.detachPending() ? st.retentionSql.finalizeDetach(index) : st.retentionSql.detach(index);
                return waiting(c, detach) && waiting(c, st.retentionSql.drop(index)) ? Drop.DROPPED : Drop.BUSY;
            } finally {
                advisory(c, RetentionSql.UNLOCK, key);
            }
        });
        if (d == Drop.DROPPED) {
            log.info("retention dropped a log partition: stream={} stream_id={} partition={} from_id={} to_id={} retention={}",
                    stream.name(), stream.id(), b.table(), b.low(), b.high() - 1, retention);
        }
        return d;
    }

    /** Runs {@code ddl} with this session's lock wait at {@link #DETACH_WAIT}; false when the wait ran out. */
    private static boolean waiting(Connection c, String ddl) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(RetentionSql.SET_LOCK_TIMEOUT)) {
            ps.setString(1, DETACH_WAIT.toMillis() + "ms");
            ps.execute();
        }
        try (Statement s = c.createStatement()) {
            s.execute(ddl);
            return true;
        } catch (SQLException e) {
            if (dev.sluice.internal.jdbc.SqlErrors.LOCK_NOT_AVAILABLE.equals(e.getSQLState())) {
                return false;
            }
            throw e;
        } finally {
            try (Statement s = c.createStatement()) {
                s.execute(RetentionSql.RESET_LOCK_TIMEOUT);
            }
        }
    }

    private static boolean advisory(Connection c, String sql, String key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getBoolean(1);
            }
        }
    }

    /** The indexes of this stream's partition tables that are no longer attached (detached, never dropped). */
    private List<Long> leftovers(Connection c) throws SQLException {
        List<Long> out = new ArrayList<>();
        try (PreparedStatement ps = Sql.bind(c.prepareStatement(RetentionSql.LEFTOVERS), t.quotedSchema(),
                "^message_log_" + t.streamId() + "_[0-9]{1,18}$"); ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                String name = rs.getString(1);
                out.add(Long.parseLong(name.substring(name.lastIndexOf('_') + 1)));
            }
        }
        return out;
    }

    private void dropLeftover(long index) {
        db.autoCommit("drop detached partition " + index + " of stream '" + stream.name() + "'",
                c -> waiting(c, st.retentionSql.drop(index)));
    }

    private boolean attached(Connection c, long index) throws SQLException {
        try (PreparedStatement ps = Sql.bind(c.prepareStatement(RetentionSql.ATTACHED), t.messageLog(), t.messageLogPartition(index));
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getBoolean(1);
        }
    }
}
