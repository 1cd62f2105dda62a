package dev.sluice.internal.runtime;

import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs at most {@code maxConcurrent} tasks at a time on an underlying (usually shared) executor; the rest wait
 * in a lock-free queue. A finishing task's thread runs the next waiting one itself (up to {@link #RUN_LENGTH} in a
 * row, then the slot goes back through the underlying executor), so a busy consumer costs no thread switch per
 * task. No pool thread ever blocks waiting for a slot. A task that throws still frees its slot (the exception then reaches
 * the underlying executor as usual).
 *
 * <p>If the underlying executor rejects a task, the slot is freed at once; from {@link #execute} the rejection
 * is rethrown to the caller, and when it happens while a finishing task hands on the next one, that task is
 * dropped (the underlying executor is shutting down).
 */
public final class BoundedExecutor implements Executor {
    /** The most waiting tasks one pool thread runs in a row before it hands its slot back. */
    static final int RUN_LENGTH = 64;
    private final Executor underlying;
    private final int maxConcurrent;
    private final Queue<Runnable> waiting = new ConcurrentLinkedQueue<>();
    private final AtomicInteger active = new AtomicInteger();

    public BoundedExecutor(Executor underlying, int maxConcurrent) {
        if (maxConcurrent < 1) {
            throw new IllegalArgumentException("maxConcurrent must be at least 1, was " + maxConcurrent);
        }
        this.underlying = Objects.requireNonNull(underlying, "underlying");
        this.maxConcurrent = maxConcurrent;
    }

    @Override
    public void execute(Runnable task) {
        waiting.add(Objects.requireNonNull(task, "task"));
        dispatch(true);
    }

    /** Tasks handed to the underlying executor and not yet finished. */
    public int active() {
        return active.get();
    }

    /** Tasks waiting for a slot. */
    public int queued() {
        return waiting.size();
    }

    private void dispatch(boolean rethrow) {
        while (!waiting.isEmpty()) {
            int a = active.get();
            if (a >= maxConcurrent) {
                return; // a running task re-dispatches when it finishes
            }
            if (!active.compareAndSet(a, a + 1)) {
                continue;
            }
            Runnable next = waiting.poll();
            if (next == null) {
                active.decrementAndGet(); // another dispatcher took it; re-check the queue
                continue;
            }
            try {
                underlying.execute(() -> runAndRelease(next));
            } catch (RejectedExecutionException e) {
                active.decrementAndGet();
                if (rethrow) {
                    throw e;
                }
            }
        }
    }

    /**
     * Runs the task, then keeps its slot for the tasks waiting behind it (at most {@link #RUN_LENGTH} in a row) on
     * the same thread: handing each one to the underlying executor instead would wake another pool thread per
     * task, a thread switch per job on a busy queue. After the run length the slot goes back through the
     * underlying executor's queue, so other work sharing the pool is not starved.
     */
    private void runAndRelease(Runnable task) {
        Runnable current = task;
        for (int ran = 1; ; ran++) {
            try {
                current.run();
            } catch (Throwable t) {
                active.decrementAndGet();
                dispatch(false);
                throw t;
            }
            Runnable next = ran < RUN_LENGTH ? waiting.poll() : null;
            if (next == null) {
                break;
            }
            current = next;
        }
        active.decrementAndGet();
        dispatch(false);
    }
}
