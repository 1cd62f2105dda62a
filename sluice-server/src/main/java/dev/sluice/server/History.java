package dev.sluice.server;

import dev.sluice.MetricSnapshot;
import dev.sluice.Sluice;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The last 15 minutes of the manager's metric snapshots, for the dashboard's charts: one read of the small
 * {@code metric_snapshot} table per sample (never a count over the log), kept in memory as bounded rings —
 * at most {@link #MAX_POINTS} points for at most {@link #MAX_SERIES} series.
 */
public final class History {
    static final int MAX_POINTS = 180;
    static final int MAX_SERIES = 2_000;
    private static final long WINDOW_MILLIS = 15 * 60 * 1000L;
    private static final Logger log = LoggerFactory.getLogger(History.class);

    /** One point: when, and the figures that chart (rate for streams; lag, rate and dead for groups; depth for queues). */
    public record Point(long atMillis, Double rate, Long lag, Long dead, Long pending, Long processing) {
    }

    private final Sluice sluice;
    private final Map<String, ArrayDeque<Point>> series = new LinkedHashMap<>();
    private long lastTaken;

    public History(Sluice sluice) {
        this.sluice = sluice;
    }

    /** Reads the newest snapshots and appends the ones taken since the last sample. */
    public void sample() {
        List<MetricSnapshot> snapshots;
        try {
            snapshots = sluice.maintenance().metrics();
        } catch (RuntimeException e) {
            log.debug("could not read metric snapshots for the dashboard's history", e);
            return;
        }
        long now = System.currentTimeMillis();
        synchronized (series) {
            long newest = lastTaken;
            for (MetricSnapshot s : snapshots) {
                long at = s.takenAt().toEpochMilli();
                String key = s.kind() + ":" + s.name();
                ArrayDeque<Point> ring = series.get(key);
                if (ring == null) {
                    if (series.size() >= MAX_SERIES) {
                        continue;
                    }
                    ring = new ArrayDeque<>();
                    series.put(key, ring);
                }
                if (!ring.isEmpty() && ring.peekLast().atMillis() >= at) {
                    continue; // the manager has not taken a newer one
                }
                ring.addLast(new Point(at, s.ratePerSecond(), s.lag(), s.dead(), s.pending(), s.processing()));
                while (ring.size() > MAX_POINTS || (!ring.isEmpty() && now - ring.peekFirst().atMillis() > WINDOW_MILLIS)) {
                    ring.pollFirst();
                }
                newest = Math.max(newest, at);
            }
            series.values().removeIf(r -> r.isEmpty() || now - r.peekLast().atMillis() > WINDOW_MILLIS);
            lastTaken = newest;
        }
    }

    /** The series, {@code kind:name} → points oldest first. */
    public Map<String, List<Point>> snapshot() {
        Map<String, List<Point>> out = new LinkedHashMap<>();
        synchronized (series) {
            series.forEach((k, v) -> out.put(k, new ArrayList<>(v)));
        }
        return out;
    }
}
