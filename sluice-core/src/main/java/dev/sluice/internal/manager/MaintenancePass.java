package dev.sluice.internal.manager;

import dev.sluice.MaintenanceReport;
import dev.sluice.MetricSnapshot;
import dev.sluice.SweepResult;
import dev.sluice.SweepStatus;
import dev.sluice.internal.jdbc.ErrorText;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.fleet.FleetSweeps;
import dev.sluice.internal.queue.JobStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One maintenance pass over the schema, in a fixed order: the fleet's expired instances and old snapshots, the
 * janitor's stream sweeps (partitions ahead, retention, TTLs), the queues' rescue, expiry, dead-job retention and the
 * retention of run records and events,
 * then the metric snapshots; each sweep bounded, a failing one reported and the others run. The pass is recorded
 * in {@code maintenance_sweep}. Passes are idempotent, so two at once (an operator's run-once beside the
 * manager's) only share the work.
 */
public final class MaintenancePass {
    private static final Logger log = LoggerFactory.getLogger(MaintenancePass.class);

    private final FleetSweeps fleet;
    private final Supplier<List<SweepResult>> streamSweeps;
    private final JobStore jobs;
    private final MetricSnapshots metrics;
    private final SweepLedger ledger;
    private final Duration snapshotRetention;
    private final Object passLock = new Object();

    /**
     * @param streamSweeps      the janitor's pass over every stream (one result per sweep)
     * @param streams           the streams whose figures are taken (those at this code's family version)
     * @param snapshotRetention how long instance snapshots are kept past their recorded expiry
     */
    public MaintenancePass(Db db, String schema, String quotedSchema, FleetSweeps fleet, Supplier<List<SweepResult>> streamSweeps,
                           JobStore jobs, Supplier<List<dev.sluice.StreamInfo>> streams,
                           java.util.function.Function<dev.sluice.StreamInfo, List<dev.sluice.GroupInfo>> groups,
                           Supplier<List<dev.sluice.QueueInfo>> queues, Duration snapshotRetention) {
        this.fleet = fleet;
        this.streamSweeps = streamSweeps;
        this.jobs = jobs;
        this.metrics = new MetricSnapshots(db, schema, quotedSchema, streams, groups, queues);
        this.ledger = new SweepLedger(db, quotedSchema);
        this.snapshotRetention = snapshotRetention;
    }

    /** Runs one pass now (passes of this client never overlap) and records it as run by {@code runBy}. */
    public MaintenanceReport run(String runBy) {
        synchronized (passLock) {
            long start = System.nanoTime();
            List<SweepResult> out = new ArrayList<>();
            out.add(sweep("worker_instances", fleet::expiredInstances));
            out.add(sweep("instance_log", () -> fleet.snapshots(snapshotRetention)));
            long streamsStart = System.nanoTime();
            try {
                out.addAll(streamSweeps.get());
            } catch (RuntimeException e) {
                out.add(new SweepResult("streams", 0, Duration.ofNanos(System.nanoTime() - streamsStart), ErrorText.of(e)));
            }
            out.add(sweep("queue_rescue", () -> {
                long[] r = jobs.rescueExpired();
                return r[0] + r[1];
            }));
            out.add(sweep("queue_expiry", jobs::expireUnclaimed));
            out.add(sweep("dead_jobs", jobs::sweepDeadJobs));
            out.add(sweep("job_runs", jobs::sweepRuns));
            out.add(sweep("job_events", jobs::sweepEvents));
            out.add(sweep("metrics", metrics::take));
            MaintenanceReport report = new MaintenanceReport(out, Duration.ofNanos(System.nanoTime() - start));
            try {
                ledger.record(out, System.nanoTime() - start, runBy);
            } catch (RuntimeException e) {
                log.warn("could not record the maintenance pass: error={}", e.toString());
            }
            for (SweepResult r : out) {
                if (!r.ok()) {
                    log.warn("maintenance sweep failed; retried at the next pass: sweep={} error={}", r.name(), r.error());
                } else if (r.removed() > 0) {
                    log.debug("maintenance sweep: sweep={} removed={} took_ms={}", r.name(), r.removed(), r.took().toMillis());
                }
            }
            return report;
        }
    }

    private static SweepResult sweep(String name, LongSupplier work) {
        long start = System.nanoTime();
        try {
            long removed = work.getAsLong();
            return new SweepResult(name, removed, Duration.ofNanos(System.nanoTime() - start), null);
        } catch (RuntimeException e) {
            return new SweepResult(name, 0, Duration.ofNanos(System.nanoTime() - start), ErrorText.of(e));
        }
    }

    /** The last run of each sweep, as recorded. */
    public List<SweepStatus> sweeps() {
        return ledger.list();
    }

    /** The newest metric snapshots. */
    public List<MetricSnapshot> metrics() {
        return metrics.list();
    }

    /**
     * The figures of every stream, group and queue taken now with a pass's reads, not written (a client's gauges while
     * no manager is live).
     */
    public List<MetricSnapshot> currentMetrics() {
        return metrics.current();
    }
}
