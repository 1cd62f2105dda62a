package dev.sluice.internal.metrics;

import dev.sluice.MetricSnapshot;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.jdbc.SqlErrors;
import dev.sluice.internal.runtime.ClientRuntime;
import dev.sluice.internal.runtime.PollLoop;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The refresh of a client's gauges (docs/metrics.md): a loop on the client's shared scheduler that, every interval,
 * reads the figures of every group and queue of the schema with {@link #FIGURES} — one statement, whatever the
 * number of groups and queues — and hands them to the {@link Meters}. The figures are the elected manager's metric
 * snapshots ({@code metric_snapshot}, taken every maintenance pass from the cursors and one grouped scan of the job
 * tables, never by counting the logs), so a refresh costs one small read.
 *
 * <p>When no manager is live in the schema (every client built with {@code maintenance(false)}, or the manager paused
 * with target 0) nobody takes snapshots; the same statement says so, and the refresh then takes the figures itself
 * with the manager's own reads, without writing them ({@code own}: the heads of every stream in one statement, each
 * stream's groups from its cursors, one grouped scan of the job tables) — until a manager is live again.
 */
public final class MeterRefresh implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(MeterRefresh.class);

    /**
     * Whether a manager is live (an unexpired instance of the {@code manager} worker, not paused), and the newest
     * snapshot of every group and queue; one row with nulls when there is none. {@code %1$s}: the quoted schema.
     */
    static final String FIGURES = """
            SELECT live.manager, m.kind, m.name, m.taken_at, m.head, m.committed, m.lag, m.backlog, m.retrying, m.dead,
                   m.pending, m.processing
            FROM (SELECT EXISTS (
                    SELECT 1 FROM %1$s.worker_config w JOIN %1$s.worker_instance i ON i.worker_config_id = w.id
                    WHERE w.name = 'manager' AND w.system_id IS NOT NULL AND w.target_instances <> 0
                      AND i.expires_at > now())) AS live (manager)
            LEFT JOIN %1$s.metric_snapshot m ON m.kind IN ('group', 'queue')
            """;

    private final Db db;
    private final String figures;
    private final BooleanSupplier installed;
    private final Supplier<List<MetricSnapshot>> own;
    private final Meters meters;
    private final long everyNanos;
    private final PollLoop loop;
    /** Whether the last refresh took the figures itself (no live manager). */
    private volatile boolean ownFigures;
    private boolean closed;

    /**
     * A refresh that is not started yet.
     *
     * @param installed whether the control plane exists (until it does there is nothing to read)
     * @param own       the figures taken now without a manager (not written)
     */
    public MeterRefresh(Db db, String quotedSchema, BooleanSupplier installed, Supplier<List<MetricSnapshot>> own,
                        Meters meters, Duration every, ClientRuntime runtime) {
        this.db = db;
        this.figures = FIGURES.formatted(quotedSchema);
        this.installed = installed;
        this.own = own;
        this.meters = meters;
        this.everyNanos = every.toNanos();
        this.loop = runtime.loop("meter refresh", () -> {
            refresh();
            return everyNanos;
        }, e -> Math.min(every.toMillis(), SqlErrors.maxPollBackoffMillis(e)));
    }

    /**
     * The started refresh of a client's gauges, or null when the client keeps none ({@link Meters#gauged()} false: no
     * registry); see the constructor.
     */
    public static MeterRefresh startFor(Meters meters, Db db, String quotedSchema, BooleanSupplier installed,
                                        Supplier<List<MetricSnapshot>> own, Duration every, ClientRuntime runtime) {
        if (!meters.gauged()) {
            return null;
        }
        MeterRefresh r = new MeterRefresh(db, quotedSchema, installed, own, meters, every, runtime);
        r.start();
        return r;
    }

    /** Schedules the first refresh now, then one every interval; idempotent. */
    public void start() {
        loop.start();
    }

    /** Refreshes the gauges now, in the caller's thread (the loop's runs and this never share a statement). */
    public synchronized void refresh() {
        if (closed || !installed.getAsBoolean()) {
            return;
        }
        Read r = db.read("read metric figures", c -> {
            try (PreparedStatement ps = c.prepareStatement(figures); ResultSet rs = ps.executeQuery()) {
                return read(rs);
            }
        });
        if (r.managed()) {
            if (ownFigures) {
                log.info("a manager is live again: the gauges read its metric snapshots");
                ownFigures = false;
            }
            meters.figures(r.snapshots());
            return;
        }
        if (!ownFigures) {
            log.info("no live manager in the schema: the gauges take their figures themselves each refresh until one runs");
            ownFigures = true;
        }
        meters.figures(own.get());
    }

    /** Whether the last refresh took the figures itself because no manager was live. */
    public boolean ownFigures() {
        return ownFigures;
    }

    private record Read(boolean managed, List<MetricSnapshot> snapshots) {
    }

    private static Read read(ResultSet rs) throws SQLException {
        boolean managed = false;
        List<MetricSnapshot> out = new ArrayList<>();
        while (rs.next()) {
            managed = rs.getBoolean(1);
            String kind = rs.getString(2);
            if (kind != null) {
                out.add(new MetricSnapshot(kind, rs.getString(3), rs.getTimestamp(4).toInstant(), num(rs, 5), num(rs, 6),
                        num(rs, 7), num(rs, 8), num(rs, 9), num(rs, 10), num(rs, 11), num(rs, 12), null));
            }
        }
        return new Read(managed, out);
    }

    private static Long num(ResultSet rs, int i) throws SQLException {
        long v = rs.getLong(i);
        return rs.wasNull() ? null : v;
    }

    /** Stops the refresh (a run in progress ends first) and removes the gauges. */
    @Override
    public void close() {
        loop.close();
        synchronized (this) {
            closed = true;
            meters.close();
        }
    }
}
