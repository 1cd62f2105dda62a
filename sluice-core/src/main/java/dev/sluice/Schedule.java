package dev.sluice;

import dev.sluice.internal.catalog.Names;
import java.util.Objects;
import java.util.Optional;

/**
 * A handle on a named schedule ({@code sluice.schedule(name)}): a cron or {@code @every} spec that fires a
 * message into a stream or a job into a queue. Creating a handle does no I/O and cannot fail; the name is
 * checked by the operations, before any round trip. Schedules fire only while some process runs a
 * {@link ScheduleRunner} ({@link Sluice#runSchedules()}); each due time fires exactly once however many run.
 *
 * <pre>{@code
 * sluice.schedule("nightly-report").register(ScheduleSpec.cron("0 2 * * *").zone("Europe/Berlin")
 *         .toQueue("reports").payload(new ReportRequest("daily")).build());
 * try (ScheduleRunner runner = sluice.runSchedules()) {
 *     ...
 * }
 * }</pre>
 */
public final class Schedule {
    private final Sluice sluice;
    private final String name;

    Schedule(Sluice sluice, String name) {
        this.sluice = sluice;
        this.name = name;
    }

    /** The schedule's name as given to the handle. */
    public String name() {
        return name;
    }

    /**
     * Creates the schedule or, when it exists, replaces its spec with this one (the newest declaration wins,
     * as with streams). Replacing keeps the schedule's suspended state and its cursor; only a changed
     * expression or zone moves the next due time to the first one after now. Installs or migrates the control
     * plane like stream registration. One transaction: all of it happens or none.
     *
     * @throws SluiceException {@link ErrorCode#INVALID_NAME} (no round trip), {@link ErrorCode#STREAM_NOT_FOUND}
     *                         for a stream target that does not exist, {@link ErrorCode#PAYLOAD_TOO_LARGE} when the
     *                         payload exceeds the stream's (or the default queue) limit; nothing is written
     */
    public ScheduleInfo register(ScheduleSpec spec) {
        Objects.requireNonNull(spec, "spec");
        Names.validate("schedule", name);
        return sluice.engine().scheduleStore().register(name, spec, sluice.migrate());
    }

    /** The schedule as stored, or empty when it does not exist. */
    public Optional<ScheduleInfo> get() {
        return sluice.engine().scheduleStore().get(name);
    }

    /**
     * Suspends the schedule: runners skip it until {@link #resume()}. A fire in progress still commits.
     *
     * @throws SluiceException {@link ErrorCode#SCHEDULE_NOT_FOUND}
     */
    public ScheduleInfo suspend() {
        return sluice.engine().scheduleStore().suspend(name);
    }

    /**
     * Resumes a suspended schedule. Due times missed while it was suspended are dropped (whatever its misfire
     * policy): the next due time is the first one after now. Resuming a running schedule changes nothing.
     *
     * @throws SluiceException {@link ErrorCode#SCHEDULE_NOT_FOUND}
     */
    public ScheduleInfo resume() {
        return sluice.engine().scheduleStore().resume(name);
    }

    /**
     * Fires the schedule once, now, from this process (no runner needed; also while suspended), under a key of
     * its own ({@code schedule:<name>:now:<time>}), so it never collides with a due time's fire. The next due
     * time does not move.
     *
     * @throws SluiceException {@link ErrorCode#SCHEDULE_NOT_FOUND}; a target stream destroyed meanwhile gives
     *                         {@link ErrorCode#STREAM_NOT_FOUND}
     */
    public ScheduleFire runNow() {
        return sluice.engine().scheduleStore().runNow(name);
    }

    /**
     * Deletes the schedule and its cursor; fires already made stay where they landed.
     *
     * @throws SluiceException {@link ErrorCode#SCHEDULE_NOT_FOUND}
     */
    public void destroy() {
        sluice.engine().scheduleStore().destroy(name);
    }

    @Override
    public String toString() {
        return "Schedule[" + name + "]";
    }
}
