package dev.sluice;

import dev.sluice.internal.Engine;
import dev.sluice.internal.fleet.WorkerKey;
import java.util.List;

/**
 * The schema's maintenance ({@code sluice.maintenance()}): one elected manager (a fleet worker with target 1)
 * runs a pass every {@link Sluice.Builder#maintenanceInterval}; {@link #runOnce()} runs one here and now, whoever
 * the manager is. Passes are bounded and idempotent (docs/maintenance.md).
 */
public final class Maintenance {
    private final Engine engine;

    Maintenance(Engine engine) {
        this.engine = engine;
    }

    /**
     * Runs one maintenance pass now in the caller's thread and records it.
     *
     * @throws SluiceException {@link ErrorCode#SYSTEM_NOT_REGISTERED} without a control plane when the client may not
     *                         migrate (otherwise the first use installs it)
     */
    public MaintenanceReport runOnce() {
        engine.requireControlPlane();
        return engine.maintenancePass().run(engine.clientId());
    }

    /** Who holds the manager now, whether it is paused, and each sweep's last run. */
    public MaintenanceStatus status() {
        if (!engine.controlPlaneInstalled()) {
            return new MaintenanceStatus(java.util.Optional.empty(), false, List.of());
        }
        boolean paused = engine.fleetReads().worker(WorkerKey.manager()).map(WorkerInfo::paused).orElse(false);
        return new MaintenanceStatus(engine.fleetReads().manager(), paused, engine.maintenancePass().sweeps());
    }

    /** The newest metric snapshots the manager took (streams, groups, queues). */
    public List<MetricSnapshot> metrics() {
        return engine.controlPlaneInstalled() ? engine.maintenancePass().metrics() : List.of();
    }

    /** Whether this client holds the manager now. */
    public boolean holding() {
        dev.sluice.internal.manager.Manager m = engine.manager();
        return m != null && m.holding();
    }
}
