package dev.sluice;

import java.time.Instant;

/**
 * One fire of a schedule: what landed where, under which key.
 *
 * @param schedule  the schedule's name
 * @param target    where it landed
 * @param dueAt     the due time it stands for (for {@link Schedule#runNow()}: the moment it ran)
 * @param key       the stream message's idempotency key or the job's unique key:
 *                  {@code schedule:<name>:<due time>} for due times, {@code schedule:<name>:now:<time>} for run-now
 * @param id        the message id (stream target) or job id (queue target)
 * @param duplicate whether the key was already there, so nothing new was written (the second guard; the
 *                  cursor lock is the first). For a queue target a duplicate returns the live job's id and is
 *                  reported as {@code false}
 */
public record ScheduleFire(String schedule, ScheduleSpec.Target target, Instant dueAt, String key, long id,
                           boolean duplicate) {
}
