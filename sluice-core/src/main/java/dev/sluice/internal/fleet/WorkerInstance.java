package dev.sluice.internal.fleet;

import dev.sluice.InstanceState;
import dev.sluice.internal.runtime.WorkGate;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * One live copy of a worker in this process: the {@code worker_instance} row it claimed (by a token only it
 * knows), what the last claim or heartbeat said of it, and the gate its part asks before it claims work.
 *
 * <p>Open when the worker runs everywhere (target -1), or when the row is live, no more than {@code target - 1}
 * live instances of the worker came before it, and its lease has not run out by this process's own clock
 * (the deadline is counted from when the renewal was sent, so it ends no later than the row's expiry).
 * A paused worker (target 0) is shut; a standby opens when an earlier instance leaves or expires.
 */
public final class WorkerInstance implements WorkGate {
    private final WorkerKey key;
    private final Instances registry;
    private final CopyOnWriteArrayList<Runnable> listeners = new CopyOnWriteArrayList<>();

    // Written by the registry (claims and heartbeats, one at a time), read by the parts.
    volatile long configId;
    volatile UUID token;
    volatile long instanceId;
    /** The worker's target as last read; -2 before the first claim. */
    volatile int target = -2;
    /** Live instances of the worker before this one, as last read. */
    volatile long earlier;
    /** Until when (System.nanoTime) the lease surely holds; valid while {@link #claimed}. */
    volatile long validUntilNanos;
    /** Whether the row is ours and live as far as we know. */
    volatile boolean claimed;
    volatile boolean closed;
    /** The gate as the listeners last saw it. */
    private boolean lastOpen;

    WorkerInstance(WorkerKey key, Instances registry) {
        this.key = key;
        this.registry = registry;
    }

    public WorkerKey key() {
        return key;
    }

    /** The id of the row now held (0 before the first claim). */
    public long instanceId() {
        return instanceId;
    }

    @Override
    public boolean open() {
        if (closed) {
            return false;
        }
        int t = target;
        if (t == -1) {
            return true; // unlimited: a lost row is claimed again, the work goes on meanwhile
        }
        return claimed && t > 0 && earlier < t && System.nanoTime() - validUntilNanos < 0;
    }

    /** What operators see for this instance now. */
    public InstanceState state() {
        if (target == 0) {
            return InstanceState.PAUSED;
        }
        return open() ? InstanceState.ACTIVE : InstanceState.STANDBY;
    }

    @Override
    public void onOpen(Runnable listener) {
        listeners.add(listener);
    }

    /** After a claim or heartbeat: tells the listeners when the gate opened. */
    void changed() {
        boolean now = open();
        boolean opened;
        synchronized (this) {
            opened = now && !lastOpen;
            lastOpen = now;
        }
        if (opened) {
            for (Runnable r : listeners) {
                r.run();
            }
        }
    }

    /** Leaves the fleet: the row is deleted at once (its snapshots stay), the gate shuts; idempotent. */
    public void leave() {
        if (!closed) {
            closed = true;
            registry.leave(this);
        }
    }

    @Override
    public String toString() {
        return "instance " + instanceId + " of " + key;
    }
}
