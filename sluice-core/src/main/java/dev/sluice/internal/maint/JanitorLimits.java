package dev.sluice.internal.maint;

import java.time.Duration;

/**
 * The janitor's bounds.
 *
 * @param batchSize   rows one delete moves at most (1 to 100,000)
 * @param maxRounds   full batches (or partition drops) per stream, group and sweep in one pass (1 to 10,000)
 * @param recheck     how long a stream whose partitions are held by its groups (uncommitted, exception rows,
 *                    leases) waits before retention looks again (positive)
 * @param lockTimeout how long a partition's DDL waits for its locks before it is skipped until the next pass
 *                    (positive, at most 1 minute)
 */
public record JanitorLimits(int batchSize, int maxRounds, Duration recheck, Duration lockTimeout) {
    /** 1,000 rows a batch, 10 rounds, retention re-checks held streams every minute, 300 ms lock timeout. */
    public static final JanitorLimits DEFAULT = new JanitorLimits(1_000, 10, Duration.ofMinutes(1), Duration.ofMillis(300));

    public JanitorLimits {
        if (batchSize < 1 || batchSize > 100_000) {
            throw new IllegalArgumentException("batchSize must be between 1 and 100000 (got " + batchSize + ")");
        }
        if (maxRounds < 1 || maxRounds > 10_000) {
            throw new IllegalArgumentException("maxRounds must be between 1 and 10000 (got " + maxRounds + ")");
        }
        if (recheck == null || recheck.isNegative() || recheck.isZero()) {
            throw new IllegalArgumentException("recheck must be positive (got " + recheck + ")");
        }
        if (lockTimeout == null || lockTimeout.isNegative() || lockTimeout.isZero() || lockTimeout.compareTo(Duration.ofMinutes(1)) > 0) {
            throw new IllegalArgumentException("lockTimeout must be positive and at most 1 minute (got " + lockTimeout + ")");
        }
    }
}
