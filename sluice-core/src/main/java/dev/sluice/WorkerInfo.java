package dev.sluice;

import java.time.Instant;

/**
 * A worker of the fleet ({@code sluice.fleet().workers()}): what runs, how many copies may be active, and how
 * many are live.
 *
 * @param key             the worker's key: {@code manager}, {@code schedules}, {@code queue:QUEUE} or
 *                        {@code consumer:STREAM/GROUP} — what {@link Fleet#setTarget} and {@code sluice fleet set-target} take
 * @param targetInstances -1 unlimited, 0 paused, N at most N active instances
 * @param live            instances whose lease has not expired (active, standby or paused)
 * @param active          live instances allowed to work: all of them when unlimited, at most the target otherwise
 * @param updatedAt       when the worker's declaration last changed
 */
public record WorkerInfo(String key, int targetInstances, int live, int active, Instant updatedAt) {

    /** Whether the worker is paused (target 0). */
    public boolean paused() {
        return targetInstances == 0;
    }
}
