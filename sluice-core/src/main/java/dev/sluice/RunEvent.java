package dev.sluice;

import java.time.Instant;
import java.util.Locale;

/**
 * One entry of a job's event trail ({@link Queue#events(long)}), written in the same transaction as the state change
 * it describes. Only jobs whose queue keeps runs ({@link QueueOptions#keepRuns()}) have a trail. Never holds the
 * payload or the result.
 *
 * @param jobId    the job
 * @param seq      the job's sequence number of this event: 1, 2, 3, … in the order the changes committed
 * @param type     what happened
 * @param at       when, by the database clock
 * @param attempt  the attempt it concerns (claims counted so far), or {@code null} for enqueued
 * @param workerId the worker of that attempt, or {@code null}
 * @param detail   the error of a retry, the reason of a death or cancellation, or {@code null}
 * @param nextDue  when a retried or rescued job runs next, or {@code null}
 */
public record RunEvent(long jobId, int seq, Type type, Instant at, Integer attempt, String workerId, String detail,
                       Instant nextDue) {

    /** The kinds of events, in the vocabulary of docs/runs.md. */
    public enum Type {
        /** The job was written. */
        ENQUEUED,
        /** A worker claimed it (attempt, worker). */
        CLAIMED,
        /** An attempt failed or asked for a retry; it runs again at {@code nextDue}. */
        RETRIED,
        /** Its claim expired without a heartbeat; it runs again at {@code nextDue}. */
        RESCUED,
        /** It completed. */
        SUCCEEDED,
        /** Its handler failed it for good. */
        DISCARDED,
        /** It died: its last attempt failed, it expired unclaimed, or its last claim expired ({@code detail}). */
        DEAD,
        /** An operator redrove it from the dead jobs. */
        REVIVED,
        /** It was cancelled ({@code detail}: by whom, or which parent failed). */
        CANCELLED;

        /** The stored lower-case name. */
        public String dbValue() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** The type stored as {@code value}. */
        public static Type fromDb(String value) {
            return valueOf(value.toUpperCase(Locale.ROOT));
        }
    }
}
