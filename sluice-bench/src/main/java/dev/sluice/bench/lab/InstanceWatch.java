package dev.sluice.bench.lab;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The fleet side of a kill: from the SIGKILL of a process until none of its worker instances is live any more
 * and the schema's manager is held by another process (a killed manager must be replaced too). Measured from
 * outside, by reading the fleet tables every 50 ms on a connection of its own (reconnecting through restarts and
 * terminations). A kill whose instances are not taken over within {@code limit} is recorded as -1 (late).
 */
final class InstanceWatch implements AutoCloseable {
    /** The live instances of the victim, and the holder of the active manager (the earliest live manager instance). */
    private static final String STATE = """
            SELECT (SELECT count(*) FROM %1$s.worker_instance WHERE holder = ? AND expires_at > now()),
                   (SELECT i.holder FROM %1$s.worker_instance i JOIN %1$s.worker_config w ON w.id = i.worker_config_id
                    WHERE w.system_id IS NOT NULL AND w.name = 'manager' AND i.expires_at > now() ORDER BY i.id LIMIT 1)
            """.formatted(Ledger.SLUICE_SCHEMA);

    interface Connect {
        Connection open() throws SQLException;
    }

    private final Connect connect;
    private final long limitNanos;
    private final Map<String, Double> seconds = new ConcurrentHashMap<>();
    private final ExecutorService watchers = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "lab-instance-watch");
        t.setDaemon(true);
        return t;
    });

    InstanceWatch(Connect connect, java.time.Duration limit) {
        this.connect = connect;
        this.limitNanos = limit.toNanos();
    }

    /** The process {@code victim} was just killed: watch its instances being taken over. */
    void killed(String victim) {
        long at = System.nanoTime();
        watchers.execute(() -> watch(victim, at));
    }

    private void watch(String victim, long killedAt) {
        while (System.nanoTime() - killedAt < limitNanos) {
            try (Connection c = connect.open(); PreparedStatement ps = c.prepareStatement(STATE)) {
                ps.setString(1, victim);
                while (System.nanoTime() - killedAt < limitNanos) {
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        String manager = rs.getString(2);
                        if (rs.getLong(1) == 0 && manager != null && !manager.equals(victim)) {
                            seconds.put(victim, (System.nanoTime() - killedAt) / 1e9);
                            return;
                        }
                    }
                    TimeUnit.MILLISECONDS.sleep(50);
                }
            } catch (SQLException e) {
                sleepQuietly(); // the server restarts or our backend was terminated: look again
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        seconds.put(victim, -1.0);
    }

    private static void sleepQuietly() {
        try {
            TimeUnit.MILLISECONDS.sleep(200);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Per killed process, the seconds until its instances were taken over (-1: not within the limit); waits for the watches. */
    Map<String, Double> results() {
        watchers.shutdown();
        try {
            watchers.awaitTermination(limitNanos + TimeUnit.SECONDS.toNanos(5), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return new TreeMap<>(seconds);
    }

    @Override
    public void close() {
        watchers.shutdownNow();
    }
}
