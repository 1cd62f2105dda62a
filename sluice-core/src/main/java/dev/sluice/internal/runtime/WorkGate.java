package dev.sluice.internal.runtime;

/**
 * Whether a running part (a consumption, a queue worker, a schedule runner, the manager) may take new work now:
 * its fleet instance is active — not paused by a target of 0, not a standby beyond a worker's target, not
 * past its lease. A part asks before each claim; in-flight work always finishes. The gate calls the part's
 * listener when it opens again, so a paused part waits without polling.
 */
public interface WorkGate {
    /** A gate that is always open (parts built outside a fleet, tests). */
    WorkGate OPEN = new WorkGate() {
        @Override
        public boolean open() {
            return true;
        }

        @Override
        public void onOpen(Runnable listener) {
        }
    };

    /** Whether the part may claim work now. */
    boolean open();

    /** Calls {@code listener} (on a runtime thread; it must not block) each time the gate opens after being shut. */
    void onOpen(Runnable listener);
}
