/**
 * Cron and {@code @every} schedules: due times, registration and the runners' fire step, which fires each due time
 * exactly once across processes by locking the schedule's cursor row ({@code docs/schedules.md}).
 */
package dev.sluice.internal.schedule;
