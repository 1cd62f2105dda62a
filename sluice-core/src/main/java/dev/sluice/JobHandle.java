package dev.sluice;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/**
 * A claimed job ({@link Queue#claim(int)}, or the argument of a {@link JobHandler}). The claim is held
 * until {@link #claimExpiresAt()}; {@link #heartbeat()} extends it by the job's visibility timeout.
 *
 * <p><b>Validity.</b> {@link #ack}, {@link #retry}, {@link #fail}, {@link #terminal} and
 * {@link #heartbeat} succeed only while the job is still processing under <em>this</em> claim and the
 * claim has not expired. Otherwise — the claim expired (it may have been rescued and claimed by another
 * worker), or the handle was already resolved — they return {@code false} and change nothing. A stale
 * worker therefore cannot corrupt a job someone else now holds; its work may have run twice
 * (at-least-once), which the {@code false} makes visible.
 *
 * <p>Handles are thread-safe; each operation is one short statement of its own (never inside the
 * caller's transaction).
 *
 * @param <T> the payload type
 */
public interface JobHandle<T> {

    /** The job's id (stable across retries, rescue and redrive). */
    long id();

    /** The queue's name. */
    String queue();

    /**
     * This claim's token, as text (a UUID): with {@link #id()} it names the claim to {@link Queue#claimed(long, String)},
     * so another process (a stateless HTTP worker) can resolve or heartbeat it. Whoever knows it can resolve the job:
     * treat it as a secret of the claimer.
     */
    String claimToken();

    /**
     * The payload, decoded on first use.
     *
     * @throws SluiceException {@link ErrorCode#PAYLOAD_NOT_DECODABLE} when the stored bytes do not decode
     *                         into the queue's payload type
     */
    T payload();

    /** The stored payload bytes, exactly as enqueued. */
    byte[] payloadBytes();

    /** The content type stored with the payload. */
    String contentType();

    /** This claim's attempt number: 1 on the first claim, counting every claim including rescued ones. */
    int attempt();

    /** The attempts the job may use (stamped at enqueue). */
    int maxAttempts();

    /** The job's priority. */
    int priority();

    /** The job's headers (empty when none). */
    Map<String, String> headers();

    /** The job's unique key, or {@code null}. */
    String uniqueKey();

    /** When the job was enqueued. */
    Instant createdAt();

    /** The job's visibility timeout (stamped at enqueue). */
    Duration visibilityTimeout();

    /** When the claim expires, by the database clock, as of the claim or the last successful heartbeat. */
    Instant claimExpiresAt();

    /**
     * Completes the job: it ends succeeded (or cancelled, when a cancel was requested meanwhile; see
     * {@link #cancelled()}). Its row is deleted; a queue that keeps runs keeps its record.
     */
    boolean ack();

    /**
     * Completes the job with a result, stored once in its run record ({@link JobRun#result(Class)}) when the queue keeps
     * runs or a waiter awaits it, and dropped otherwise. Serialized with the default serdes ({@code byte[]} as is,
     * {@code String} as UTF-8, anything else as JSON).
     *
     * @throws SluiceException {@link ErrorCode#PAYLOAD_TOO_LARGE} for a result over the queue's maxPayloadBytes,
     *                         {@link ErrorCode#PAYLOAD_NOT_SERIALIZABLE} when it does not serialize (nothing changed)
     */
    boolean complete(Object result);

    /** Completes the job with result bytes of this content type (checked as {@link #complete(Object)}). */
    boolean complete(byte[] result, String contentType);

    /**
     * Whether a cancel was requested while the job runs ({@link Queue#cancel(long)}), as of the last heartbeat (no
     * I/O). A handler that sees it should stop early; whatever it then returns, the job ends cancelled.
     */
    boolean cancelled();

    /**
     * Puts the job back to run again at once. The attempt stays counted: when it was the job's last
     * attempt the job is moved to the dead jobs ({@link DeadReason#FAILED}) instead.
     */
    boolean retry();

    /** Like {@link #retry()}, but the job runs no earlier than {@code delay} from now. */
    boolean retry(Duration delay);

    /**
     * Records a failed attempt: the job runs again after the backoff ({@code backoffBase × 2^(attempt-1)},
     * capped at {@code maxBackoff}, minus up to 10 % jitter), or, when this was its last attempt, is moved
     * to the dead jobs ({@link DeadReason#FAILED}). The error text (with its stack trace) is kept in
     * {@code last_error}, cleaned: NUL, other control characters (not tab or line breaks) and lone
     * surrogates become U+FFFD, and it is cut to 16,000 characters.
     */
    boolean fail(Throwable error);

    /** Like {@link #fail(Throwable)} with an error text (cleaned and cut the same way). */
    boolean fail(String error);

    /**
     * Failed for good: a dead letter at once ({@link DeadReason#DISCARDED}), whatever attempts are left — the
     * same idea as {@link Outcome#terminal(String)} on streams. The reason is kept in {@code last_error},
     * cleaned and cut as in {@link #fail(Throwable)}. (The stored reason stays {@code discarded}, the value it
     * always had.)
     */
    boolean terminal(String reason);

    /** @deprecated use {@link #terminal(String)}, the word streams use ({@link Outcome#terminal(String)}) */
    @Deprecated
    default boolean discard(String reason) {
        return terminal(reason);
    }

    /** Extends the claim to now + the job's visibility timeout (by the database clock). */
    boolean heartbeat();
}
