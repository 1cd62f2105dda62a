package dev.sluice.internal.fleet;

import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.jdbc.Sql;
import dev.sluice.internal.jdbc.SqlErrors;
import dev.sluice.internal.notify.ClientSession;
import dev.sluice.internal.runtime.ClientRuntime;
import dev.sluice.internal.runtime.PollLoop;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The fleet instances of one client and their heartbeat. Every running part joins with its worker's key and
 * gets a {@link WorkerInstance}; one heartbeat statement per interval renews every instance of the process
 * (not one per instance), so idle cost does not grow with the number of groups. The heartbeat also reads each
 * worker's target, so a pause (target 0) or a cap (target N) reaches every part within one interval — at once
 * when the change is notified ({@link #WAKE_KEY}). A standby beats again when the instance ahead of it is due to
 * expire, so it takes over within one lease of its holder's last renewal; a clean leave deletes the row and
 * notifies, so standbys take over at once.
 */
public final class Instances implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Instances.class);
    /** The notification payload that makes every process of the schema beat now (a target changed, a capped instance left). */
    public static final String WAKE_KEY = "fleet";
    /** A standby beats this long after the instance ahead of it is due to expire (clock steps, commit time). */
    private static final long TAKEOVER_SLACK_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final Db db;
    private final WorkerSql sql;
    private final WorkerConfigs configs;
    private final String holder;
    private final String lockPrefix;
    private final long leaseNanos;
    private final double leaseSeconds;
    private final long beatNanos;
    private final Supplier<ClientSession> sessions;
    private final PollLoop loop;
    private final Set<WorkerInstance> members = ConcurrentHashMap.newKeySet();
    private AutoCloseable wakeRegistration;
    private boolean started;
    private volatile boolean closed;
    private volatile long lastWarn;

    /**
     * @param holder   what the rows say of this process ({@code host:pid} by default)
     * @param lease    how long an instance stays live without a heartbeat; the process beats every third of it
     * @param sessions the client's session, for the {@link #WAKE_KEY} notifications (null: none)
     */
    public Instances(Db db, String schema, WorkerConfigs configs, String holder, Duration lease, ClientRuntime runtime,
                     Supplier<ClientSession> sessions) {
        this.db = db;
        this.sql = configs.sql();
        this.configs = configs;
        this.holder = holder;
        this.lockPrefix = "sluice.fleet:" + schema + ":";
        this.leaseNanos = lease.toNanos();
        this.leaseSeconds = lease.toNanos() / 1e9;
        this.beatNanos = leaseNanos / 3;
        this.sessions = sessions;
        this.loop = runtime.loop("fleet heartbeat", this::beat, SqlErrors::maxPollBackoffMillis);
    }

    /** How often this process beats. */
    public Duration heartbeatInterval() {
        return Duration.ofNanos(beatNanos);
    }

    /**
     * Joins the fleet as an instance of {@code key}, claiming the row now (one short transaction).
     *
     * @throws dev.sluice.SluiceException {@link dev.sluice.ErrorCode#WORKER_NOT_FOUND} for a group that is not
     *                                    registered; a coded database error when the claim fails
     */
    public WorkerInstance join(WorkerKey key) {
        WorkerInstance w = new WorkerInstance(key, this);
        claim(w);
        members.add(w);
        start();
        return w;
    }

    /** Joins as an instance of {@code key} whose row the heartbeat claims soon (no I/O here). */
    public WorkerInstance joinLater(WorkerKey key) {
        WorkerInstance w = new WorkerInstance(key, this);
        members.add(w);
        start();
        loop.wake();
        return w;
    }

    /** Makes the heartbeat run now (a notification, tests). */
    public void beatNow() {
        loop.wake();
    }

    /** The instances this process holds now. */
    public List<WorkerInstance> members() {
        return List.copyOf(members);
    }

    private synchronized void start() {
        if (started || closed) {
            return;
        }
        started = true;
        ClientSession s = sessions == null ? null : sessions.get();
        if (s != null) {
            wakeRegistration = s.onWake(WAKE_KEY, loop::wake);
        }
        loop.start(beatNanos);
    }

    // ------------------------------------------------------------------ claim, heartbeat, leave

    /** Claims a row for {@code w} (a first claim, or again after its row was lost). */
    private void claim(WorkerInstance w) {
        synchronized (w) {
            if (w.closed) {
                return;
            }
            UUID token = UUID.randomUUID();
            int failures = w.instanceId == 0 ? 0 : 1;
            long sent = System.nanoTime();
            // Idempotent by its token: a claim whose commit reply was lost is run again and finds its own row.
            Object[] row = db.idempotentTransaction("claim a fleet instance of " + w.key(), c -> {
                long configId = w.configId != 0 ? w.configId : configs.resolve(c, w.key());
                Sql.execute(c, WorkerSql.LOCK_CLAIMS, lockPrefix + configId);
                return Sql.first(c, sql.claim, rs -> new Object[] {configId, rs.getLong(1), rs.getInt(3), rs.getLong(4),
                        rs.getObject(5) == null ? null : rs.getDouble(5)}, configId, token, holder, failures, leaseSeconds).orElseThrow();
            });
            w.configId = (Long) row[0];
            w.instanceId = (Long) row[1];
            w.token = token;
            w.target = (Integer) row[2];
            w.earlier = (Long) row[3];
            w.validUntilNanos = sent + leaseNanos;
            w.claimed = true;
        }
        w.changed();
    }

    /** One heartbeat: renews every held row in one statement, claims rows for members without one; returns the next wait. */
    private long beat() {
        if (closed) {
            return beatNanos;
        }
        Map<UUID, WorkerInstance> held = new HashMap<>();
        for (WorkerInstance w : members) {
            if (w.claimed && !w.closed) {
                held.put(w.token, w);
            }
        }
        long next = beatNanos;
        if (!held.isEmpty()) {
            long sent = System.nanoTime();
            List<Object[]> rows = db.autoCommit("fleet heartbeat", c -> Sql.list(c, sql.renew, rs -> new Object[] {
                    rs.getObject(1, UUID.class), rs.getInt(3), rs.getLong(4), rs.getObject(5) == null ? null : rs.getDouble(5)},
                    leaseSeconds, Sql.array("uuid", held.keySet())));
            for (Object[] r : rows) {
                WorkerInstance w = held.remove((UUID) r[0]);
                if (w != null) {
                    w.target = (Integer) r[1];
                    w.earlier = (Long) r[2];
                    w.validUntilNanos = sent + leaseNanos;
                    if (r[3] != null && w.target > 0 && w.earlier >= w.target) {
                        // A standby: look again when the instance ahead of it is due to expire.
                        next = Math.min(next, Math.max(0, (long) ((Double) r[3] * 1e9)) + TAKEOVER_SLACK_NANOS);
                    }
                }
            }
            for (WorkerInstance lost : held.values()) {
                if (!lost.closed) { // a part that left during the beat deleted its own row
                    lost.claimed = false; // expired (this process stalled past its lease) or deleted by the manager
                    warn("fleet instance lost (expired or removed); claiming a new one: " + lost);
                }
            }
        }
        for (WorkerInstance w : members) {
            if (!w.claimed && !w.closed) {
                try {
                    claim(w);
                } catch (RuntimeException e) {
                    warn("could not claim a fleet instance of " + w.key() + "; retrying at the next heartbeat: " + e.getMessage());
                }
            }
        }
        for (WorkerInstance w : members) {
            w.changed();
        }
        return next;
    }

    /** A part left: its row goes at once; standbys of a capped worker are told to take over now. */
    void leave(WorkerInstance w) {
        members.remove(w);
        UUID token;
        synchronized (w) {
            token = w.claimed ? w.token : null;
            w.claimed = false;
        }
        if (token != null) {
            try {
                db.autoCommit("release a fleet instance", c -> Sql.list(c, sql.release, rs -> null,
                        Sql.array("uuid", new UUID[] {token}), configs.channel()));
            } catch (RuntimeException e) {
                warn("could not release " + w + "; it expires within its lease: " + e.getMessage());
            }
        }
    }

    private void warn(String what) {
        long now = System.nanoTime();
        if (now - lastWarn > TimeUnit.SECONDS.toNanos(30)) {
            lastWarn = now;
            log.warn(what);
        }
    }

    /** Leaves with every instance still held (their parts closed first) and stops the heartbeat. */
    @Override
    public void close() {
        synchronized (this) {
            closed = true;
        }
        loop.close();
        List<WorkerInstance> left = new ArrayList<>(members);
        for (WorkerInstance w : left) {
            w.leave();
        }
        AutoCloseable wake = wakeRegistration;
        if (wake != null) {
            try {
                wake.close();
            } catch (Exception ignored) {
                // a wake registration has nothing to fail on
            }
        }
    }
}
