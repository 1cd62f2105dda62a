package dev.sluice.internal.shard;

import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import dev.sluice.internal.fleet.Instances;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.jdbc.Identifiers;
import dev.sluice.internal.jdbc.Sql;
import dev.sluice.internal.jdbc.SqlErrors;
import dev.sluice.internal.notify.Channels;
import dev.sluice.internal.notify.ClientSession;
import dev.sluice.internal.runtime.ClientRuntime;
import dev.sluice.internal.runtime.PollLoop;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.stream.IntStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shard leases of one client: its {@link ShardMember}s of every partitioned group and their heartbeat. One
 * heartbeat statement per interval (a third of the lease) renews the buckets of <em>all</em> members of all groups
 * and reads, per member, what it holds, its fair share, the members and the claimable buckets — not one statement
 * per member, and none while the client has no member (the loop runs only while members exist). The heartbeat
 * also runs at once on a {@code shards} notification (a member released buckets, a group was repartitioned), on a
 * {@code fleet} one (a worker's target changed, and the fair share with it), when a member joins or leaves, and
 * when another member's renewal is late, at the moment its bucket becomes claimable (a killed member's buckets are
 * then taken over within the lease and the takeover grace, not up to a heartbeat later); it calls a member's
 * {@code onChange} when that member has to act.
 */
public final class ShardLeases implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ShardLeases.class);

    /** How long after a late bucket becomes claimable the heartbeat looks (the server's clock ran on meanwhile). */
    private static final long LATE_MARGIN_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    private final Db db;
    private final ShardSql sql;
    private final String channel;
    private final long leaseNanos;
    private final double leaseSeconds;
    private final long beatNanos;
    private final ClientRuntime runtime;
    private final Supplier<ClientSession> sessions;
    private final Set<ShardMember> members = ConcurrentHashMap.newKeySet();
    /** Heartbeats never overlap, also across a stopped loop and its successor. */
    private final Object beatLock = new Object();
    private final AtomicLong beats = new AtomicLong();
    // Guarded by this.
    private PollLoop loop;
    private final List<AutoCloseable> wakeRegistrations = new ArrayList<>();
    private boolean closed;
    private volatile long lastWarn;

    /**
     * @param schema   the installation schema, unquoted (already validated)
     * @param lease    how long a bucket stays owned without a renewal; the heartbeat runs every third of it
     * @param sessions the client's session, for the {@code shards} notifications (null, or one giving null: none)
     */
    public ShardLeases(Db db, String schema, Duration lease, ClientRuntime runtime, Supplier<ClientSession> sessions) {
        if (lease.toMillis() < 3) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "a shard lease must be at least 3 ms (got " + lease + ")");
        }
        this.db = db;
        this.sql = ShardSql.of(Identifiers.quote(schema));
        this.channel = Channels.forSchema(schema);
        this.leaseNanos = lease.toNanos();
        this.leaseSeconds = lease.toNanos() / 1e9;
        this.beatNanos = leaseNanos / 3;
        this.runtime = runtime;
        this.sessions = sessions;
    }

    /** How often the heartbeat runs while members exist. */
    public Duration heartbeatInterval() {
        return Duration.ofNanos(beatNanos);
    }

    /**
     * Registers a member of the group (its own random lease token, never exposed); no I/O here. The heartbeat runs
     * at once, and then every interval while members exist.
     *
     * @param shardCount the group's number of buckets (as declared)
     * @param instanceId the member's fleet instance now ({@code worker_instance.id}; 0 before it has one), written
     *                   on each claim for operators
     * @param onChange   called (from the heartbeat's thread; it must not block) when the member has to act: it lost
     *                   buckets, it holds fewer than its fair share and some are claimable, or more than its share
     * @throws SluiceException {@link ErrorCode#CLIENT_CLOSED} after {@link #close()}
     */
    public ShardMember join(long groupId, int shardCount, LongSupplier instanceId, Runnable onChange) {
        ShardMember m = new ShardMember(this, groupId, shardCount, instanceId, onChange);
        synchronized (this) {
            if (closed) {
                throw new SluiceException(ErrorCode.CLIENT_CLOSED, "the client is closed; no member of group " + groupId
                        + " can join");
            }
            members.add(m);
            if (loop == null) {
                loop = runtime.loop("shard heartbeat", this::beat, SqlErrors::maxPollBackoffMillis);
                ClientSession s = sessions == null ? null : sessions.get();
                if (s != null) {
                    // Buckets released or repartitioned; a worker's target changed (the fair share with it).
                    wakeRegistrations.add(s.onWake(ShardSql.WAKE_KEY, this::beatSoon));
                    wakeRegistrations.add(s.onWake(Instances.WAKE_KEY, this::beatSoon));
                }
                loop.start();
            } else {
                loop.wake();
            }
        }
        return m;
    }

    /** Makes the heartbeat run now (a notification; nothing when no member exists). */
    public synchronized void beatSoon() {
        if (loop != null) {
            loop.wake();
        }
    }

    /** The members registered now. */
    public List<ShardMember> members() {
        return List.copyOf(members);
    }

    /** How many heartbeats ran (each one statement); for tests and metrics. */
    public long heartbeats() {
        return beats.get();
    }

    /** Runs one heartbeat in the caller's thread (tests); returns the wait before the next one. */
    long beatOnce() {
        return beat();
    }

    // ------------------------------------------------------------------ the heartbeat

    private long beat() {
        synchronized (beatLock) {
            List<ShardMember> list = new ArrayList<>(members.size());
            for (ShardMember m : members) {
                if (!m.closed()) {
                    list.add(m);
                }
            }
            if (list.isEmpty()) {
                return beatNanos;
            }
            Long[] groups = new Long[list.size()];
            UUID[] tokens = new UUID[list.size()];
            Map<UUID, ShardMember> byToken = new HashMap<>();
            for (int i = 0; i < list.size(); i++) {
                ShardMember m = list.get(i);
                groups[i] = m.groupId();
                tokens[i] = m.token;
                byToken.put(m.token, m);
            }
            long sent = System.nanoTime();
            List<Object[]> rows = db.autoCommitReplayable("shard heartbeat", c -> Sql.list(c, sql.renew, rs -> new Object[] {
                    rs.getObject(2, UUID.class), ints(rs.getArray(3)), rs.getInt(4), rs.getInt(5), rs.getInt(6),
                    rs.getObject(7)}, Sql.array("int8", groups), Sql.array("uuid", tokens), leaseSeconds));
            beats.incrementAndGet();
            long next = beatNanos;
            List<ShardMember> act = new ArrayList<>();
            for (Object[] r : rows) {
                if (r[5] instanceof Number claimableIn) {
                    // Another member's renewal is late: look again the moment its bucket can be taken over.
                    long in = (long) (claimableIn.doubleValue() * 1e9) + LATE_MARGIN_NANOS;
                    next = Math.min(next, Math.max(LATE_MARGIN_NANOS, in));
                }
                ShardMember m = byToken.remove((UUID) r[0]);
                if (m != null && m.renewed((int[]) r[1], sent, sent + leaseNanos, (Integer) r[2], (Integer) r[3], (Integer) r[4])) {
                    act.add(m);
                }
            }
            for (ShardMember m : byToken.values()) { // every pair has a row; a member without one holds nothing
                if (m.renewed(new int[0], sent, sent + leaseNanos, 0, 0, 0)) {
                    act.add(m);
                }
            }
            for (ShardMember m : act) {
                try {
                    m.changed();
                } catch (RuntimeException e) {
                    warn("the change callback of " + m + " failed: " + e);
                }
            }
            return next;
        }
    }

    private static int[] ints(java.sql.Array a) throws SQLException {
        if (a == null) {
            return new int[0];
        }
        Object values = a.getArray();
        if (values instanceof Integer[] boxed) {
            int[] out = new int[boxed.length];
            for (int i = 0; i < boxed.length; i++) {
                out[i] = boxed[i];
            }
            return out;
        }
        return (int[]) values;
    }

    // ------------------------------------------------------------------ a member's statements

    /** One claim statement for {@code m}; returns whether another claim may follow. */
    boolean claimOne(ShardMember m) {
        long instance = m.instanceId();
        Object instanceParam = instance > 0 ? (Object) instance : new Sql.Null(Types.BIGINT);
        m.claimStarted();
        long sent = System.nanoTime();
        int[] r;
        try {
            r = db.autoCommit("claim a bucket of group " + m.groupId(), c -> Sql.first(c, sql.claimOne,
                    rs -> new int[] {rs.getObject(1) == null ? -1 : rs.getInt(1), rs.getInt(2), rs.getInt(3)},
                    leaseSeconds, m.token, instanceParam, m.groupId())).orElse(new int[] {-1, 0, 0});
        } catch (RuntimeException e) {
            m.claimFailed();
            throw e;
        }
        return m.claimEnded(r[0], sent + leaseNanos, r[1], r[2]);
    }

    /** Gives buckets of {@code m} back (own transaction) and notifies the schema's channel when one was released. */
    void release(ShardMember m, int[] buckets) {
        Integer[] boxed = IntStream.of(buckets).boxed().toArray(Integer[]::new);
        db.autoCommit("release buckets of group " + m.groupId(), c -> Sql.list(c, sql.release, rs -> rs.getInt(1),
                m.groupId(), m.token, Sql.array("int4", boxed), channel));
    }

    /** The commit guard of {@code m} in the caller's transaction. */
    TreeSet<Integer> lockHeld(Connection c, ShardMember m, Collection<Integer> wanted) throws SQLException {
        return new TreeSet<>(Sql.list(c, sql.lockHeld, rs -> rs.getInt(1), m.groupId(), m.token,
                Sql.array("int4", wanted.toArray(new Integer[0])), leaseSeconds));
    }

    /** {@code m} left: every row it owns goes back (whatever this process knew of), and it leaves the heartbeat. */
    void leave(ShardMember m) {
        synchronized (this) {
            members.remove(m);
            if (members.isEmpty()) {
                stopLoop();
            } else if (loop != null) {
                loop.wake();
            }
        }
        try {
            release(m, IntStream.range(0, m.shardCount()).toArray());
        } catch (RuntimeException e) {
            warn("could not release the buckets of " + m + "; they expire within the lease: " + e.getMessage());
        }
    }

    /** Stops the loop (without waiting: a leave may run on the heartbeat's callback) and its wake registration. */
    private void stopLoop() {
        if (loop != null) {
            loop.cancel();
            loop = null;
        }
        for (AutoCloseable wake : wakeRegistrations) {
            try {
                wake.close();
            } catch (Exception ignored) {
                // a wake registration has nothing to fail on
            }
        }
        wakeRegistrations.clear();
    }

    private void warn(String what) {
        long now = System.nanoTime();
        if (now - lastWarn > TimeUnit.SECONDS.toNanos(30)) {
            lastWarn = now;
            log.warn(what);
        }
    }

    /** Every member still registered leaves (its buckets go back at once) and the heartbeat stops; idempotent. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        for (ShardMember m : List.copyOf(members)) {
            m.leave();
        }
        synchronized (this) {
            stopLoop();
        }
    }
}
