package dev.sluice.internal.notify;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one dedicated connection of a client: it LISTENs on the schema's channel and fans
 * notifications out to waiting consumers (payload = stream id) and queue workers (payload = a string
 * key such as {@code q:<queue>}), and it holds the presence locks of live consumptions. It reconnects
 * by itself; after a reconnect it re-takes the presence locks and wakes every waiter once (a
 * notification may have been missed meanwhile).
 */
public final class ClientSession implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ClientSession.class);
    /** The longest pause between tries of a presence lock that another session holds exclusively. */
    static final long MAX_RETRY_MS = 1_000;

    private final DataSource dataSource;
    private final String channel;
    private final Map<Long, Set<Runnable>> waiters = new ConcurrentHashMap<>();
    /** Waiters on non-numeric payloads (job queues notify {@code q:<queue>}); stream ids stay numeric. */
    private final Map<String, Set<Runnable>> keyWaiters = new ConcurrentHashMap<>();
    private final Map<String, Integer> presence = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<Request> requests = new ConcurrentLinkedQueue<>();
    private final Thread thread;
    private volatile boolean healthy;
    private volatile boolean closed;
    private volatile long lastWarn;
    /** Presence keys whose shared lock this connection holds (session thread only). */
    private final Set<String> held = new HashSet<>();
    /** Hold requests whose key could not be taken yet, completed once it is (session thread only). */
    private final Map<String, List<CompletableFuture<Void>>> waitingForHold = new HashMap<>();
    /** When (System.nanoTime) the presence locks not held are tried next, and the current backoff. */
    private long retryAt;
    private long retryDelayMs;
    private long lastBlockedWarn;

    private record Request(String key, boolean take, CompletableFuture<Void> done) {
    }

    public ClientSession(DataSource dataSource, String schema) {
        this.dataSource = dataSource;
        this.channel = Channels.forSchema(schema);
        this.thread = new Thread(this::run, "sluice-session-" + schema);
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /** Whether the LISTEN connection is up (wake-ups arrive). */
    public boolean healthy() {
        return healthy;
    }

    /** Calls {@code wake} on every notification for the stream (and after reconnects) until the returned handle is closed. */
    public AutoCloseable onWake(long streamId, Runnable wake) {
        waiters.computeIfAbsent(streamId, k -> new CopyOnWriteArraySet<>()).add(wake);
        return () -> {
            Set<Runnable> set = waiters.get(streamId);
            if (set != null) {
                set.remove(wake);
            }
        };
    }

    /**
     * Calls {@code wake} on every notification whose payload is exactly {@code key} (and after reconnects)
     * until the returned handle is closed. Keys must not be numeric: numbers are stream ids.
     */
    public AutoCloseable onWake(String key, Runnable wake) {
        keyWaiters.compute(key, (k, set) -> {
            Set<Runnable> s = set == null ? new CopyOnWriteArraySet<>() : set;
            s.add(wake);
            return s;
        });
        // The key goes with its last waiter: keys are per job for completion waits, so they must not pile up.
        return () -> keyWaiters.computeIfPresent(key, (k, set) -> {
            set.remove(wake);
            return set.isEmpty() ? null : set;
        });
    }

    /**
     * Holds the shared presence lock {@code key} (reference-counted); completes once held. While another
     * session holds the key exclusively the lock is retried with a bounded backoff, and wake-ups keep coming.
     */
    public CompletableFuture<Void> holdPresence(String key) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        requests.add(new Request(key, true, done));
        nudge();
        return done;
    }

    /** Releases one hold of the presence lock {@code key}. */
    public CompletableFuture<Void> releasePresence(String key) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        requests.add(new Request(key, false, done));
        nudge();
        return done;
    }

    /**
     * Brings the session thread out of its notification receipt (up to 250 ms) so a queued presence request
     * is served now: an empty notification on the client's channel, which every listener ignores. One round
     * trip per consume or close, never while idle — so 1,000 consumptions start and stop in seconds rather
     * than 250 ms each. A failure only leaves the request to the next receipt timeout.
     */
    private void nudge() {
        if (!receiving || closed) {
            return;
        }
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement("SELECT pg_notify(?, '')")) {
            ps.setString(1, channel);
            ps.execute();
        } catch (SQLException | RuntimeException e) {
            log.debug("presence nudge failed (the request is served at the next receipt): {}", e.toString());
        }
    }

    /** Whether the session thread is (about to be) blocked receiving notifications. */
    private volatile boolean receiving;

    private void run() {
        long backoff = 100;
        while (!closed) {
            try (Connection c = dataSource.getConnection(); NotificationReceipt receipt = NotificationReceipt.prompt(c)) {
                c.setAutoCommit(true);
                try (Statement s = c.createStatement()) {
                    s.execute("LISTEN \"" + channel.replace("\"", "\"\"") + "\"");
                }
                held.clear(); // a new connection holds nothing yet
                retryDelayMs = 0;
                retryAt = System.nanoTime();
                takePending(c);
                healthy = true;
                backoff = 100;
                wakeAll();
                PGConnection pg = c.unwrap(PGConnection.class);
                while (!closed) {
                    applyRequests(c);
                    takePending(c);
                    receiving = true;
                    PGNotification[] batch;
                    try {
                        batch = requests.isEmpty() ? pg.getNotifications(receiveTimeoutMillis()) : null;
                    } finally {
                        receiving = false;
                    }
                    if (batch != null) {
                        for (PGNotification n : batch) {
                            dispatch(n.getParameter());
                        }
                    }
                }
            } catch (SQLException | RuntimeException e) {
                healthy = false;
                held.clear();
                if (closed) {
                    break;
                }
                long now = System.nanoTime();
                if (now - lastWarn > 60_000_000_000L) {
                    lastWarn = now;
                    log.warn("wake-up connection lost; reconnecting: error={}", e.toString());
                }
                // Presence requests cannot be served while disconnected: complete them when re-taken.
                try {
                    Thread.sleep(backoff);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    break;
                }
                backoff = Math.min(5_000, backoff * 2);
            }
        }
        healthy = false;
        Request r;
        while ((r = requests.poll()) != null) {
            r.done().complete(null);
        }
        waitingForHold.values().forEach(list -> list.forEach(f -> f.complete(null)));
        waitingForHold.clear();
    }

    /** How long the next notification receipt may block: until the next retry of a presence lock, at most 250 ms. */
    private int receiveTimeoutMillis() {
        if (held.size() == presence.size()) {
            return 250;
        }
        long left = TimeUnit.NANOSECONDS.toMillis(retryAt - System.nanoTime());
        return (int) Math.max(1, Math.min(250, left)); // 0 would block until a notification arrives
    }

    private void applyRequests(Connection c) throws SQLException {
        Request r;
        // Each request is taken off the queue before its statement: one that fails (the connection broke)
        // is not applied twice, and its hold is completed once the key is re-taken after the reconnect.
        while ((r = requests.poll()) != null) {
            if (r.take()) {
                presence.merge(r.key(), 1, Integer::sum);
                if (held.contains(r.key())) {
                    r.done().complete(null);
                    continue;
                }
                // Held exclusively by someone else: taken by a later retry, the future completed then.
                waitingForHold.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(r.done());
                if (tryLock(c, r.key())) {
                    completeHolds(r.key());
                }
            } else {
                try {
                    Integer n = presence.computeIfPresent(r.key(), (k, v) -> v > 1 ? v - 1 : null);
                    if (n == null) {
                        completeHolds(r.key()); // nothing left to wait for
                        if (held.remove(r.key())) {
                            unlock(c, r.key());
                        }
                    }
                } finally {
                    r.done().complete(null);
                }
            }
        }
    }

    private void completeHolds(String key) {
        List<CompletableFuture<Void>> waiting = waitingForHold.remove(key);
        if (waiting != null) {
            waiting.forEach(f -> f.complete(null));
        }
    }

    /**
     * Tries the presence locks not held yet, when their retry is due (backoff from 10 ms doubling to
     * {@link #MAX_RETRY_MS}). The try form never waits: a role holding a key exclusively must not stop
     * this connection from receiving notifications (the blocking form did, for as long as it held the key).
     */
    private void takePending(Connection c) throws SQLException {
        if (held.size() == presence.size()) {
            retryDelayMs = 0; // nothing to wait for: a key blocked later is tried again soon
            return;
        }
        if (System.nanoTime() - retryAt < 0) {
            return;
        }
        boolean missing = false;
        for (String key : presence.keySet()) {
            if (held.contains(key)) {
                continue;
            }
            if (tryLock(c, key)) {
                completeHolds(key);
            } else {
                missing = true;
                warnBlocked(key);
            }
        }
        retryDelayMs = missing ? Math.min(MAX_RETRY_MS, Math.max(10, retryDelayMs * 2)) : 0;
        retryAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(retryDelayMs);
    }

    private boolean tryLock(Connection c, String key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_try_advisory_lock_shared(hashtextextended(?, 0))")) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                if (rs.getBoolean(1)) {
                    held.add(key);
                    return true;
                }
                return false;
            }
        }
    }

    private static void unlock(Connection c, String key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_unlock_shared(hashtextextended(?, 0))")) {
            ps.setString(1, key);
            ps.execute();
        }
    }

    private void warnBlocked(String key) {
        long now = System.nanoTime();
        if (now - lastBlockedWarn > 60_000_000_000L) {
            lastBlockedWarn = now;
            log.warn("presence lock held exclusively by another session; retrying without blocking wake-ups: key={}", key);
        }
    }

    private void dispatch(String payload) {
        try {
            wakeLocal(Long.parseLong(payload));
        } catch (NumberFormatException e) {
            // Not a stream id: a keyed waiter's, or not ours (someone else notifying on the channel).
            wakeLocal(payload);
        }
    }

    /**
     * A commit by a producer of this process: wakes this process's consumers of the stream at once,
     * without waiting for the NOTIFY to come back from the server (it still comes, for everyone else).
     */
    public void wakeLocal(long streamId) {
        runAll(waiters.get(streamId));
    }

    /** The keyed form of {@link #wakeLocal(long)}: wakes this process's waiters on {@code key} at once. */
    public void wakeLocal(String key) {
        runAll(keyWaiters.get(key));
    }

    private static void runAll(Set<Runnable> set) {
        if (set != null) {
            set.forEach(Runnable::run);
        }
    }

    private void wakeAll() {
        waiters.values().forEach(ClientSession::runAll);
        keyWaiters.values().forEach(ClientSession::runAll);
    }

    @Override
    public void close() {
        closed = true;
        thread.interrupt();
        try {
            thread.join(2_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
