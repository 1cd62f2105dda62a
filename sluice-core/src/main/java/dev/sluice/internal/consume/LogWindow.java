package dev.sluice.internal.consume;

/**
 * A window of the log, ids {@code (floor, reach]}, that a claim or fetch may touch. Its bounds are bound as
 * parameters the planner sees as constants, so it prunes {@code message_log} to the partitions the window spans.
 * Without them a statement whose ids come from another table (a cursor, a lease) plans, opens and locks every
 * partition: a group that lags keeps many partitions from retention, so every claim would slow down the further
 * it lags, and each would take two locks per partition (the 60-minute lab run overflowed the server's lock table
 * with 718 partitions). The span covers many batches, so a window is moved rarely.
 *
 * @param floor the ids it covers lie above this
 * @param reach the ids it covers lie at or below this
 */
record LogWindow(long floor, long reach) {
    /** The least span of a window, in ids. */
    static final long MIN_SPAN = 4_096;

    /** A window spans at least this many batches. */
    static final long SPAN_BATCHES = 16;

    /** The window from {@code floor} on, for claims of up to {@code batch} messages. */
    static LogWindow from(long floor, long batch) {
        long span = Math.max(MIN_SPAN, Math.max(1, batch) * SPAN_BATCHES);
        long f = Math.max(0, floor);
        return new LogWindow(f, f > Long.MAX_VALUE - span ? Long.MAX_VALUE : f + span);
    }

    /** Whether a cursor at {@code position} (everything at or below it taken) claims inside this window. */
    boolean holds(long position) {
        return position >= floor && position < reach;
    }
}
