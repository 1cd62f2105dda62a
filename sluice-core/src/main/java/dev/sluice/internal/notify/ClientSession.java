package dev.sluice.internal.notify;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArraySet;
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
        keyWaiters.computeIfAbsent(key, k -> new CopyOnWriteArraySet<>()).add(wake);
        return () -> {
            Set<Runnable> set = keyWaiters.get(key);
            if (set != null) {
                set.remove(wake);
            }
        };
    }

    /** Holds the shared presence lock {@code key} (reference-counted); completes once held. */
    public CompletableFuture<Void> holdPresence(String key) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        requests.add(new Request(key, true, done));
        return done;
    }

    /** Releases one hold of the presence lock {@code key}. */
    public CompletableFuture<Void> releasePresence(String key) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        requests.add(new Request(key, false, done));
        return done;
    }

    private void run() {
        long backoff = 100;
        while (!closed) {
            try (Connection c = dataSource.getConnection(); NotificationReceipt receipt = NotificationReceipt.prompt(c)) {
                c.setAutoCommit(true);
                try (Statement s = c.createStatement()) {
                    s.execute("LISTEN \"" + channel.replace("\"", "\"\"") + "\"");
                }
                for (String key : presence.keySet()) {
                    lock(c, key, true);
                }
                healthy = true;
                backoff = 100;
                wakeAll();
                PGConnection pg = c.unwrap(PGConnection.class);
                while (!closed) {
                    applyRequests(c);
                    PGNotification[] batch = pg.getNotifications(250);
                    if (batch != null) {
                        for (PGNotification n : batch) {
                            dispatch(n.getParameter());
                        }
                    }
                }
            } catch (SQLException | RuntimeException e) {
                healthy = false;
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
    }

    private void applyRequests(Connection c) throws SQLException {
        Request r;
        while ((r = requests.peek()) != null) {
            if (r.take()) {
                int n = presence.merge(r.key(), 1, Integer::sum);
                if (n == 1) {
                    lock(c, r.key(), true);
                }
            } else {
                Integer n = presence.computeIfPresent(r.key(), (k, v) -> v > 1 ? v - 1 : null);
                if (n == null) {
                    lock(c, r.key(), false);
                }
            }
            requests.poll();
            r.done().complete(null);
        }
    }

    private static void lock(Connection c, String key, boolean take) throws SQLException {
        String fn = take ? "pg_advisory_lock_shared" : "pg_advisory_unlock_shared";
        try (PreparedStatement ps = c.prepareStatement("SELECT " + fn + "(hashtextextended(?, 0))")) {
            ps.setString(1, key);
            ps.execute();
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
