package dev.sluice;

import dev.sluice.internal.Engine;
import dev.sluice.internal.fleet.WorkerConfigs;
import dev.sluice.internal.fleet.WorkerKey;
import java.util.List;
import java.util.Objects;

/**
 * The schema's worker fleet ({@code sluice.fleet()}): every long-running part — a group's consumptions, a queue's
 * workers, the schedule runners, the manager — is a live instance of a worker, renewed by its process's
 * heartbeat. A worker's target caps or pauses its instances. Handles do no I/O; each method is one short read
 * or transaction.
 *
 * <pre>{@code
 * sluice.fleet().setTarget("consumer:orders/billing", 0);   // pause: its consumptions stop claiming within a heartbeat
 * sluice.fleet().setTarget("consumer:orders/billing", -1);  // resume everywhere
 * }</pre>
 */
public final class Fleet {
    private final Engine engine;

    Fleet(Engine engine) {
        this.engine = engine;
    }

    /** Every worker with its target and live counts; empty when the control plane is not installed. */
    public List<WorkerInfo> workers() {
        return engine.controlPlaneInstalled() ? engine.fleetReads().workers() : List.of();
    }

    /**
     * One worker by key ({@code manager}, {@code schedules}, {@code queue:QUEUE}, {@code consumer:STREAM/GROUP}).
     *
     * @throws SluiceException {@link ErrorCode#INVALID_ARGUMENT} for a malformed key, {@link ErrorCode#WORKER_NOT_FOUND}
     *                         when there is no such worker
     */
    public WorkerInfo worker(String key) {
        WorkerKey k = WorkerKey.parse(key);
        return (engine.controlPlaneInstalled() ? engine.fleetReads().worker(k) : java.util.Optional.<WorkerInfo>empty())
                .orElseThrow(() -> new SluiceException(ErrorCode.WORKER_NOT_FOUND, "no worker '" + k + "'"));
    }

    /** Every instance row: live ones with their state, and expired ones the manager has not cleaned up yet. */
    public List<InstanceInfo> instances() {
        return engine.controlPlaneInstalled() ? engine.fleetReads().instances() : List.of();
    }

    /**
     * Sets a worker's target instances: {@code -1} unlimited (the default), {@code 0} paused (its parts stop claiming
     * within one heartbeat — at once when the notification arrives — and resume when it changes), {@code N} at most
     * N active instances (the others wait as standbys and take over when one leaves or expires). The manager's
     * target is 1 or 0. Every process of the schema is notified. Returns the worker as it is now.
     *
     * @throws SluiceException {@link ErrorCode#INVALID_ARGUMENT} for a malformed key or a target out of range (nothing
     *                         changed), {@link ErrorCode#WORKER_NOT_FOUND} for a group that is not registered or a queue
     *                         no worker ever ran ({@code manager} and {@code schedules} may be set before they ran)
     */
    public WorkerInfo setTarget(String key, int target) {
        WorkerKey k = WorkerKey.parse(Objects.requireNonNull(key, "key"));
        WorkerConfigs.validateTarget(k, target);
        if (!engine.controlPlaneInstalled()) {
            throw new SluiceException(ErrorCode.WORKER_NOT_FOUND, "no worker '" + k + "': the schema has no Sluice control plane");
        }
        engine.workerConfigs().setTarget(k, target);
        engine.instances().beatNow();
        return worker(k.toString());
    }
}
