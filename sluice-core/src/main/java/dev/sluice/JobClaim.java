package dev.sluice;

import dev.sluice.internal.jdbc.ErrorText;
import dev.sluice.internal.queue.ClaimedJob;
import dev.sluice.internal.queue.JobStore;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

/**
 * A claim named by its job id and claim token ({@link Queue#claimed(long, String)}), for a process that did not make
 * the claim itself — a stateless HTTP worker that got the job from {@link Queue#claim(int)} through a server and
 * reports back later. It holds no row and no state beyond the id and token (and the cancel flag of its last
 * heartbeat): every operation is one of the guarded statements a {@link JobHandle} uses.
 *
 * <p><b>Validity.</b> As with {@link JobHandle}, each operation succeeds only while the job is still processing under
 * this claim token and the claim has not expired; otherwise — the claim expired (the job may be claimed by someone
 * else now), the job was already resolved, or the token is not the job's — it returns {@code false} (or empty) and
 * changes nothing. The token, which only the claimer was given, is what names the claim: the statements do not
 * check the queue's name.
 *
 * <pre>{@code
 * JobHandle<byte[]> job = queue.claim(1).get(0);
 * long id = job.id(); String token = job.claimToken();   // handed to a worker elsewhere
 * ...
 * JobClaim claim = queue.claimed(id, token);
 * claim.heartbeat();                                      // Optional<Instant>: the new expiry, or empty when lost
 * boolean done = claim.ack();                             // false: the claim was lost, the job may run again
 * }</pre>
 *
 * <p>Thread-safe; each operation is one short statement of its own (never inside the caller's transaction).
 */
public final class JobClaim {
    private final JobStore store;
    private final long id;
    private final UUID token;
    private final int maxResultBytes;
    private volatile boolean cancelled;

    JobClaim(JobStore store, long id, UUID token, int maxResultBytes) {
        this.store = store;
        this.id = id;
        this.token = token;
        this.maxResultBytes = maxResultBytes;
    }

    /**
     * The claim token of a caller, strictly in the canonical UUID form (36 characters, hex digits in groups of
     * 8-4-4-4-12); the text is never repeated in the message, since whoever knows a token can resolve its job.
     *
     * @throws SluiceException {@link ErrorCode#INVALID_ARGUMENT} for anything else (null included)
     */
    static UUID parseToken(String text) {
        if (text == null || text.length() != 36) {
            throw badToken();
        }
        for (int i = 0; i < 36; i++) {
            char ch = text.charAt(i);
            boolean dash = i == 8 || i == 13 || i == 18 || i == 23;
            boolean hex = (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
            if (dash ? ch != '-' : !hex) {
                throw badToken();
            }
        }
        return UUID.fromString(text);
    }

    private static SluiceException badToken() {
        return new SluiceException(ErrorCode.INVALID_ARGUMENT, "a claim token is a UUID: 36 characters, hex digits in"
                + " groups of 8-4-4-4-12 (JobHandle.claimToken())");
    }

    /** The job's id. */
    public long id() {
        return id;
    }

    /**
     * Completes the job: it ends succeeded (or cancelled, when a cancel was requested meanwhile). Its row is deleted; a
     * queue that keeps runs keeps its record. False when the claim is not held (nothing changed).
     */
    public boolean ack() {
        // The plain ack deletes only a job whose end needs nothing else (no record, waiter, cancel or children), so it
        // is right whatever the queue keeps; the finish statement ends the rest, and tells a lost claim.
        if (!store.ackAll(new long[] {id}, new UUID[] {token}).isEmpty()) {
            return true;
        }
        return store.finishOne(id, token, null, null) != null;
    }

    /**
     * Completes the job with result bytes of this content type, as {@link JobHandle#complete(byte[], String)}: stored
     * in its run record when the queue keeps runs or a waiter awaits it, dropped otherwise. False when the claim is not
     * held (nothing changed).
     *
     * @throws SluiceException before any round trip: {@link ErrorCode#PAYLOAD_TOO_LARGE} for a result over the queue
     *                         handle's maxPayloadBytes, {@link ErrorCode#INVALID_ARGUMENT} for a content type that is
     *                         empty, longer than 255 characters or holds control characters
     */
    public boolean complete(byte[] result, String contentType) {
        ClaimedJob.checkResult(id, result, contentType, maxResultBytes);
        return store.finishOne(id, token, result.clone(), contentType) != null;
    }

    /**
     * Puts the job back to run no earlier than {@code delay} from now, as {@link JobHandle#retry(Duration)}: the
     * attempt stays counted, so on the job's last attempt it goes to the dead jobs instead. False when the claim is
     * not held.
     *
     * @throws SluiceException {@link ErrorCode#INVALID_QUEUE_OPTIONS} for a negative delay or one over 3650 days
     */
    public boolean retry(Duration delay) {
        ClaimedJob.checkRetryDelay(delay);
        return store.settle(id, token, delay, "retry requested", false) != JobStore.Settled.REFUSED;
    }

    /**
     * Records a failed attempt, as {@link JobHandle#fail(String)}: the job runs again after the backoff, or is dead
     * after its last attempt. The text is kept in {@code last_error}, cleaned (NUL, other control characters but tab
     * and line breaks, and lone surrogates become U+FFFD) and cut to 16,000 characters. False when the claim is not
     * held.
     */
    public boolean fail(String error) {
        Objects.requireNonNull(error, "error");
        return store.settle(id, token, null, ErrorText.clean(error), false) != JobStore.Settled.REFUSED;
    }

    /**
     * Failed for good, as {@link JobHandle#terminal(String)}: a dead letter at once (reason {@code discarded}),
     * whatever attempts are left; the reason is cleaned and cut as in {@link #fail(String)}. False when the claim is
     * not held.
     */
    public boolean terminal(String reason) {
        Objects.requireNonNull(reason, "reason");
        return store.settle(id, token, null, ErrorText.clean(reason), true) != JobStore.Settled.REFUSED;
    }

    /**
     * Extends the claim to now + the job's visibility timeout (by the database clock).
     *
     * @return the claim's new expiry, or empty when the claim is not held (nothing changed)
     */
    public Optional<Instant> heartbeat() {
        JobStore.Beat beat = store.heartbeat(new long[] {id}, new UUID[] {token}).get(id);
        if (beat == null) {
            return Optional.empty();
        }
        if (beat.cancelRequested()) {
            cancelled = true;
        }
        return Optional.of(beat.until());
    }

    /**
     * Whether a heartbeat through this object learnt that a cancel was requested ({@link Queue#cancel(long)}; no I/O,
     * false before any heartbeat). Whatever the worker then reports, the job ends cancelled.
     */
    public boolean cancelled() {
        return cancelled;
    }

    /** The claim without its token: {@code JobClaim[#id]}. */
    @Override
    public String toString() {
        return "JobClaim[#" + id + "]";
    }
}
