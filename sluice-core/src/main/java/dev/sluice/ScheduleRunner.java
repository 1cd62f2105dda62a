package dev.sluice;

/**
 * A running scheduler ({@link Sluice#runSchedules()}): one background thread that fires every due schedule
 * of the schema. Run one in each process that should fire schedules; any number of runners share the work,
 * and each due time fires exactly once (the runner that locks the schedule's cursor row produces or enqueues
 * the fire in the same transaction that moves the cursor on). It sleeps until the earliest due time (at most
 * one second, and it is woken when a schedule is registered, resumed or changed), never busy-waits, and
 * survives database errors (logs, backs off, carries on). Close it (or the client) to stop it.
 */
public interface ScheduleRunner extends AutoCloseable {

    /** How many fires this runner made since it started (each caught-up due time counts). */
    long fires();

    /** Whether the runner's thread is running (false once closed). */
    boolean isRunning();

    /** Stops the runner, waiting for a fire in progress to commit or roll back. */
    @Override
    void close();
}
