package dev.sluice.internal.lock;

import dev.sluice.ErrorCode;
import dev.sluice.LeaderListener;
import dev.sluice.Leadership;
import dev.sluice.LockHandle;
import dev.sluice.SluiceException;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A leader election on one TTL lock. The contender thread keeps trying to take the lock (every third of
 * the TTL) and, while leading, renews it every third of the TTL. Leadership ends locally a margin
 * before the lock can expire in the database (measured from the moment the last successful acquisition
 * or renewal was <em>sent</em>, which is no later than the database's {@code now()}), so a new leader,
 * which can only take the lock after it expired, never overlaps with the old one. A watchdog thread
 * enforces that deadline even while the contender thread is stuck in a statement. See docs/locks.md.
 */
public final class LeaderElection implements Leadership {
    private static final Logger log = LoggerFactory.getLogger(LeaderElection.class);
    /** The shortest TTL an election accepts: renewal runs every third of it. */
    public static final Duration MIN_TTL = Duration.ofMillis(300);

    private final LockStore store;
    private final String name;
    private final String owner;
    private final Duration ttl;
    private final LeaderListener listener;
    private final Runnable onClose;
    private final long ttlNanos;
    private final long marginNanos;
    private final Thread contender;
    private final Thread watchdog;
    /** Serializes every transition with its callback, so elected and revoked strictly alternate. */
    private final Object transitions = new Object();

    private volatile HeldLock held;
    /** While {@link #held} is set: the nanoTime at which leadership ends unless renewed. */
    private volatile long deadline;
    private volatile long nextRenew;
    private volatile boolean closed;
    private volatile long lastWarn;

    /** An election that is not started yet ({@link #start()}); checks the TTL before anything else. */
    public LeaderElection(LockStore store, String name, String owner, Duration ttl, LeaderListener listener, Runnable onClose) {
        if (ttl.compareTo(MIN_TTL) < 0) {
            throw new SluiceException(ErrorCode.INVALID_LOCK_OPTIONS, "a leader TTL must be at least " + MIN_TTL + " (got " + ttl + ")");
        }
        LockStore.checkTtl(ttl);
        this.store = store;
        this.name = name;
        this.owner = owner;
        this.ttl = ttl;
        this.listener = listener;
        this.onClose = onClose;
        this.ttlNanos = ttl.toNanos();
        // Room for the renewal round trip and the listener to stop its work before the lock can expire.
        this.marginNanos = Math.max(ttlNanos / 10, TimeUnit.MILLISECONDS.toNanos(20));
        this.contender = new Thread(this::contend, "sluice-leader-" + name);
        this.contender.setDaemon(true);
        this.watchdog = new Thread(this::watch, "sluice-leader-watchdog-" + name);
        this.watchdog.setDaemon(true);
    }

    /** Starts contending. */
    public void start() {
        watchdog.start();
        contender.start();
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public boolean isLeader() {
        return held != null && System.nanoTime() - deadline < 0;
    }

    @Override
    public OptionalLong fencingToken() {
        HeldLock h = held;
        return h != null && isLeader() ? OptionalLong.of(h.fencingToken()) : OptionalLong.empty();
    }

    // ------------------------------------------------------------------ threads

    private void contend() {
        long retry = Math.max(1, ttlNanos / 3);
        while (!closed) {
            HeldLock h = held;
            if (h == null) {
                long sent = System.nanoTime();
                Optional<LockHandle> got = Optional.empty();
                try {
                    got = store.tryAcquire(name, owner, ttl);
                } catch (RuntimeException e) {
                    warn("could not try the leader lock", e);
                }
                if (got.isPresent() && elect((HeldLock) got.get(), sent)) {
                    continue;
                }
                // Jitter keeps contenders that started together from probing in lockstep.
                sleep((long) (retry * (0.8 + 0.4 * ThreadLocalRandom.current().nextDouble())));
                continue;
            }
            sleep(nextRenew - System.nanoTime());
            if (closed || held != h) {
                continue;
            }
            long sent = System.nanoTime();
            Boolean renewed;
            try {
                renewed = h.renew(ttl);
            } catch (RuntimeException e) {
                warn("could not renew the leader lock; retrying until it would expire", e);
                renewed = null;
            }
            renewedOrNot(h, renewed, sent);
        }
    }

    private boolean elect(HeldLock h, long sent) {
        synchronized (transitions) {
            if (closed) {
                releaseQuietly(h);
                return false;
            }
            deadline = sent + ttlNanos - marginNanos;
            nextRenew = sent + ttlNanos / 3;
            held = h;
            LockSupport.unpark(watchdog);
            call(() -> listener.onElected(h.fencingToken()), "onElected");
            return true;
        }
    }

    private void renewedOrNot(HeldLock h, Boolean renewed, long sent) {
        synchronized (transitions) {
            if (held != h) {
                // The watchdog ended this leadership while the statement ran: give the lock up, start over.
                if (Boolean.TRUE.equals(renewed)) {
                    releaseQuietly(h);
                }
                return;
            }
            if (Boolean.TRUE.equals(renewed)) {
                deadline = sent + ttlNanos - marginNanos;
                nextRenew = sent + ttlNanos / 3;
            } else if (Boolean.FALSE.equals(renewed)) {
                log.warn("leader lock lost (expired or taken over): lock={} fencingToken={}", name, h.fencingToken());
                revoke();
            } else {
                nextRenew = System.nanoTime() + Math.min(ttlNanos / 10, TimeUnit.MILLISECONDS.toNanos(250));
            }
        }
    }

    private void watch() {
        while (!closed) {
            HeldLock h = held;
            if (h == null) {
                LockSupport.parkNanos(this, TimeUnit.SECONDS.toNanos(1));
                continue;
            }
            long left = deadline - System.nanoTime();
            if (left > 0) {
                LockSupport.parkNanos(this, left);
                continue;
            }
            synchronized (transitions) {
                if (held == h && System.nanoTime() - deadline >= 0) {
                    log.warn("leader lock not renewed in time; stepping down: lock={} fencingToken={}", name, h.fencingToken());
                    revoke();
                }
            }
        }
    }

    /** Ends the current leadership; the caller holds {@link #transitions}. */
    private void revoke() {
        held = null;
        call(listener::onRevoked, "onRevoked");
    }

    private void call(Runnable callback, String what) {
        try {
            callback.run();
        } catch (RuntimeException e) {
            log.warn("leader listener {} threw; ignored: lock={} error={}", what, name, e.toString());
        }
    }

    private void releaseQuietly(HeldLock h) {
        try {
            h.release();
        } catch (RuntimeException e) {
            warn("could not release the leader lock; it expires by itself", e);
        }
    }

    private void sleep(long nanos) {
        long until = System.nanoTime() + nanos;
        long left;
        while (!closed && (left = until - System.nanoTime()) > 0) {
            LockSupport.parkNanos(this, left);
        }
    }

    private void warn(String what, Exception e) {
        long now = System.nanoTime();
        if (now - lastWarn > TimeUnit.SECONDS.toNanos(30)) {
            lastWarn = now;
            log.warn("{}: lock={} error={}", what, name, e.toString());
        }
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        LockSupport.unpark(contender);
        LockSupport.unpark(watchdog);
        join(contender);
        join(watchdog);
        HeldLock h;
        synchronized (transitions) {
            h = held;
            if (h != null) {
                revoke();
            }
        }
        // After onRevoked returned: the listener stopped leading before anyone else can take over.
        if (h != null) {
            releaseQuietly(h);
        }
        onClose.run();
    }

    private static void join(Thread t) {
        if (!t.isAlive()) {
            return;
        }
        try {
            t.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "Leadership[" + name + "]";
    }
}
