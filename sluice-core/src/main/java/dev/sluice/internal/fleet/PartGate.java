package dev.sluice.internal.fleet;

import dev.sluice.internal.runtime.WorkGate;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A running part's gate, set once its fleet instance is claimed (the part is built first, so a refused part never
 * claims): shut until then; {@link #leave} lets the instance go when the part closes.
 */
public final class PartGate implements WorkGate {
    private volatile WorkerInstance instance;
    private final List<Runnable> early = new CopyOnWriteArrayList<>();
    private volatile boolean left;

    /** The part's instance is claimed: the gate follows it from now on. */
    public void set(WorkerInstance i) {
        instance = i;
        early.forEach(i::onOpen);
        if (left) {
            i.leave();
        }
    }

    /** The part closed: its instance leaves the fleet (now, or as soon as it is set). */
    public void leave() {
        left = true;
        WorkerInstance i = instance;
        if (i != null) {
            i.leave();
        }
    }

    /** The fleet instance's id (0 until it is set and claimed). */
    public long instanceId() {
        WorkerInstance i = instance;
        return i == null ? 0 : i.instanceId();
    }

    @Override
    public boolean open() {
        WorkerInstance i = instance;
        return i != null && i.open();
    }

    @Override
    public void onOpen(Runnable listener) {
        WorkerInstance i = instance;
        if (i != null) {
            i.onOpen(listener);
        } else {
            early.add(listener);
        }
    }
}
