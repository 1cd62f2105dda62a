package dev.sluice.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.ThreadMXBean;

/**
 * The benchmark process's own footprint at one moment: live JVM threads, the peak of live threads since
 * {@link #resetPeakThreads()}, and the heap in use after a full GC (what is reachable, not garbage).
 *
 * @param threads     live threads (daemon or not) now
 * @param peakThreads the most live threads at once since the last reset
 * @param usedHeap    heap bytes in use after a full GC
 */
record ClientFootprint(int threads, int peakThreads, long usedHeap) {
    /** Full GCs at most per reading: the first may leave garbage that a later one collects. */
    private static final int MAX_GCS = 5;

    /** The footprint now; collects garbage first (threads are read before, as a GC starts none). */
    static ClientFootprint now() {
        ThreadMXBean t = ManagementFactory.getThreadMXBean();
        int threads = t.getThreadCount();
        int peak = t.getPeakThreadCount();
        return new ClientFootprint(threads, peak, usedHeapAfterGc());
    }

    /** Starts a new peak: from here {@link #peakThreads()} is the most threads alive at once. */
    static void resetPeakThreads() {
        ManagementFactory.getThreadMXBean().resetPeakThreadCount();
    }

    /**
     * Heap in use after full GCs ({@link System#gc()}), repeated until the figure stops shrinking: what
     * the live objects take. With {@code -XX:+DisableExplicitGC} it is the heap as found (garbage included).
     */
    static long usedHeapAfterGc() {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < MAX_GCS; i++) {
            System.gc();
            long now = memory.getHeapMemoryUsage().getUsed();
            if (now >= used) {
                return used;
            }
            used = now;
        }
        return used;
    }
}
