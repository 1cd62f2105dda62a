package dev.sluice;

import java.time.Instant;

/**
 * A consumer group as stored, with its progress.
 *
 * @param id         the group id
 * @param stream     the stream's name
 * @param name       the group's name
 * @param config     the newest declaration
 * @param claimed    highest id handed out
 * @param committed  every id at or below is fully resolved
 * @param head       the stream's head (highest id drawn)
 * @param lag        {@code head - committed}: ids not yet resolved (cursor arithmetic, never a count of the log)
 * @param ready      exception rows waiting to run (retries, delays, scheduled)
 * @param deferred   exception rows waiting on their key
 * @param inflight   exception rows being handled
 * @param dead       dead letters
 * @param openRanges claimed ranges not yet completed
 * @param createdAt  when the group was created
 */
public record GroupInfo(long id, String stream, String name, GroupConfig config, long claimed, long committed, long head,
                        long lag, long ready, long deferred, long inflight, long dead, long openRanges, Instant createdAt) {
}
