package dev.sluice;

import java.time.Instant;
import java.util.Map;

/**
 * A job's run ({@link Queue#run(long)}, {@link Queue#await(long, java.time.Duration)}, {@link Queue#runs(RunQuery)}):
 * the record an ended job leaves when its queue keeps runs ({@link QueueOptions#keepRuns()}) or a waiter awaited it,
 * or, while the job is live, what its row says. The payload is stored once, with the live or dead job, and joined
 * back here while one exists; a record keeps the result, not the input.
 *
 * @param id                the job's id
 * @param queue             the queue's name
 * @param status            where the run stands
 * @param reason            why it died ({@code failed}, {@code expired}, {@code claim_expired}) or was cancelled, or
 *                          {@code null}
 * @param attempts          claims made
 * @param maxAttempts       claims allowed (stamped at enqueue)
 * @param priority          the job's priority
 * @param enqueuedAt        when it was enqueued
 * @param firstStartedAt    when its first attempt was claimed, or {@code null} if it never ran
 * @param finishedAt        when it ended, or {@code null} while live
 * @param workerId          the worker of the last attempt, or {@code null}
 * @param payload           the payload bytes of a live or dead job; {@code null} for a succeeded or cancelled run
 *                          (its record keeps the result, not the input) and once a dead job was purged
 * @param contentType       the payload's content type
 * @param result            the result bytes ({@link JobHandle#complete(Object)}), or {@code null}
 * @param resultContentType the result's content type, or {@code null}
 * @param lastError         the last failure's text, or {@code null}
 * @param uniqueKey         the unique key, or {@code null}
 * @param headers           the headers (empty when none)
 * @param keptUntil         when the retention sweep may delete the record, or {@code null} while live
 */
public record JobRun(long id, String queue, RunStatus status, String reason, int attempts, int maxAttempts, int priority,
                     Instant enqueuedAt, Instant firstStartedAt, Instant finishedAt, String workerId, byte[] payload,
                     String contentType, byte[] result, String resultContentType, String lastError, String uniqueKey,
                     Map<String, String> headers, Instant keptUntil) {

    /** Copies the byte arrays and the headers. */
    public JobRun {
        payload = payload == null ? null : payload.clone();
        result = result == null ? null : result.clone();
        headers = headers == null ? Map.of() : Map.copyOf(headers);
    }

    /** A copy of the payload bytes, or {@code null}. */
    @Override
    public byte[] payload() {
        return payload == null ? null : payload.clone();
    }

    /** A copy of the result bytes, or {@code null}. */
    @Override
    public byte[] result() {
        return result == null ? null : result.clone();
    }

    /** Whether the run is over. */
    public boolean ended() {
        return status.ended();
    }

    /**
     * The result decoded as {@code type} (the default serdes: {@code byte[]} as is, {@code String} as UTF-8, anything
     * else as JSON), or {@code null} when there is none.
     *
     * @throws SluiceException {@link ErrorCode#PAYLOAD_NOT_DECODABLE} when the bytes do not decode
     */
    public <R> R result(Class<R> type) {
        if (result == null) {
            return null;
        }
        try {
            return Serde.forType(type).deserialize(result);
        } catch (Exception e) {
            throw new SluiceException(ErrorCode.PAYLOAD_NOT_DECODABLE, "the result of job " + id + " (" + resultContentType
                    + ") does not decode as " + type.getName() + ": " + e.getClass().getSimpleName(), e);
        }
    }

    @Override
    public String toString() {
        return "JobRun[" + queue + "#" + id + " " + status.dbValue() + " attempts=" + attempts + "]";
    }
}
