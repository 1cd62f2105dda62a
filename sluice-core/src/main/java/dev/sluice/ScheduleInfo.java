package dev.sluice;

import java.time.Instant;

/**
 * A schedule as stored: its spec and its cursor.
 *
 * @param name        the schedule's name
 * @param spec        the spec it was last registered with (a stream target shows the stream's current name)
 * @param suspended   whether it is suspended (runners skip it; {@link Schedule#runNow()} still fires)
 * @param nextDueAt   the next due time a runner will fire (ignored while suspended; recomputed on resume)
 * @param lastDueAt   the newest due time fired, or null when it never fired on schedule
 * @param lastFiredAt when it last fired (due times and run-now alike), or null
 * @param fires       how many fires it made (each caught-up due time and each run-now counts)
 * @param createdAt   when it was first registered
 * @param updatedAt   when its spec or state last changed
 */
public record ScheduleInfo(String name, ScheduleSpec spec, boolean suspended, Instant nextDueAt, Instant lastDueAt,
                           Instant lastFiredAt, long fires, Instant createdAt, Instant updatedAt) {
}
