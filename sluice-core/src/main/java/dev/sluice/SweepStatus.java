package dev.sluice;

import java.time.Duration;
import java.time.Instant;

/**
 * The last run of one maintenance sweep, as recorded by whoever ran it ({@code sluice.maintenance().status()}).
 *
 * @param name        the sweep ({@link SweepResult#name()})
 * @param lastRunAt   when its last run ended
 * @param lastRemoved what its last run removed
 * @param lastTook    how long its last run took
 * @param lastError   why its last run failed, or null
 * @param runBy       the client that ran it (the manager's holder, or an operator's run-once)
 * @param runs        how many times it ran in this schema
 * @param failures    how many of those runs failed
 */
public record SweepStatus(String name, Instant lastRunAt, long lastRemoved, Duration lastTook, String lastError, String runBy,
                          long runs, long failures) {
}
