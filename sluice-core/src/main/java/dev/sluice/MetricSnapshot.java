package dev.sluice;

import java.time.Instant;

/**
 * The newest figures the manager took of one stream, group or queue ({@code sluice.maintenance().metrics()}):
 * read from a small table, never by counting big ones. Fields that do not apply to the kind are null.
 *
 * @param kind      {@code stream}, {@code group} or {@code queue}
 * @param name      the stream, {@code STREAM/GROUP}, or the queue
 * @param takenAt   when the figures were taken
 * @param head      the stream's head (streams and groups)
 * @param committed the group's committed position
 * @param lag       the group's lag ({@code head - committed})
 * @param backlog   ids the group has not claimed yet ({@code head - claimed})
 * @param retrying  the group's exception rows waiting or running (ready, deferred, in flight)
 * @param dead      dead letters of the group, dead jobs of the queue
 * @param pending   the queue's jobs waiting (due or scheduled)
 * @param processing the queue's claimed jobs
 * @param ratePerSecond streams: ids produced per second; groups: ids committed per second — since the previous
 *                  snapshot (null on the first)
 */
public record MetricSnapshot(String kind, String name, Instant takenAt, Long head, Long committed, Long lag, Long backlog,
                             Long retrying, Long dead, Long pending, Long processing, Double ratePerSecond) {
}
