package dev.sluice.internal.queue;

import dev.sluice.ErrorCode;
import dev.sluice.JobHandle;
import dev.sluice.Serde;
import dev.sluice.SluiceException;
import dev.sluice.internal.jdbc.ErrorText;
import dev.sluice.internal.metrics.JobMeters;
import dev.sluice.internal.metrics.JobOutcome;
import dev.sluice.internal.metrics.NoMeters;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * The handle of one claim. Every operation is one statement guarded by the claim's validity predicate
 * (see {@link QueueSql}); the handle only remembers whether it was resolved so a worker does not
 * resolve it a second time after its handler did.
 */
public final class ClaimedJob<T> implements JobHandle<T> {
    private final JobStore store;
    private final JobStore.Claimed row;
    private final Serde<T> serde;
    /** The worker's batched acks, or null for a handle of {@code Queue.claim} (acks on its own). */
    private final JobCompleter completer;
    /** The largest result {@link #complete} accepts (the queue handle's maxPayloadBytes). */
    private final int maxResultBytes;
    /** The worker's queue meters, counting how the attempt ended ({@code Queue.claim} handles: no-ops). */
    private final JobMeters meters;
    private volatile Instant claimExpiresAt;
    private volatile boolean cancelled;
    private volatile boolean resolved;
    private volatile boolean decoded;
    /** How the attempt ended, once counted (the worker's span reads it); null while unresolved. */
    private volatile JobOutcome outcome;
    private T payload;

    /** A handle on a claimed row; {@code serde} decodes the payload on first use; results up to {@code maxResultBytes}. */
    public ClaimedJob(JobStore store, JobStore.Claimed row, Serde<T> serde, int maxResultBytes) {
        this(store, row, serde, null, maxResultBytes, NoMeters.INSTANCE);
    }

    /**
     * A worker's handle: its acks go through the worker's completer, batched with the others', and its ends are counted
     * in the worker's meters.
     */
    ClaimedJob(JobStore store, JobStore.Claimed row, Serde<T> serde, JobCompleter completer, int maxResultBytes,
               JobMeters meters) {
        this.meters = meters;
        this.store = store;
        this.row = row;
        this.serde = serde;
        this.completer = completer;
        this.maxResultBytes = maxResultBytes;
        this.claimExpiresAt = row.claimExpiresAt();
    }

    UUID token() {
        return row.token();
    }

    long visibilityTimeoutNanos() {
        return row.visibilityTimeoutNs();
    }

    /** Whether ack, retry, fail or discard was called on this handle (whatever it returned). */
    boolean resolved() {
        return resolved;
    }

    /** Marks the handle resolved without a statement: the worker gives its claim back in a batch. */
    void markResolved() {
        resolved = true;
    }

    /** The claimed row as the claim returned it. */
    JobStore.Claimed row() {
        return row;
    }

    /** Records a heartbeat made on the handle's behalf (the worker batches them). */
    void extended(JobStore.Beat beat) {
        this.claimExpiresAt = beat.until();
        if (beat.cancelRequested()) {
            this.cancelled = true;
        }
    }

    @Override
    public long id() {
        return row.id();
    }

    @Override
    public String queue() {
        return row.queue();
    }

    @Override
    public String claimToken() {
        return row.token().toString();
    }

    @Override
    public synchronized T payload() {
        if (!decoded) {
            try {
                payload = serde.deserialize(row.payload());
            } catch (Exception e) {
                throw new SluiceException(ErrorCode.PAYLOAD_NOT_DECODABLE, "job " + row.id() + " of queue '" + row.queue()
                        + "' has a payload (" + row.contentType() + ") that does not decode: " + e.getClass().getSimpleName(), e);
            }
            decoded = true;
        }
        return payload;
    }

    @Override
    public byte[] payloadBytes() {
        return row.payload().clone();
    }

    @Override
    public String contentType() {
        return row.contentType();
    }

    @Override
    public int attempt() {
        return row.attempt();
    }

    @Override
    public int maxAttempts() {
        return row.maxAttempts();
    }

    @Override
    public int priority() {
        return row.priority();
    }

    @Override
    public Map<String, String> headers() {
        return row.headers();
    }

    @Override
    public String uniqueKey() {
        return row.uniqueKey();
    }

    @Override
    public Instant createdAt() {
        return row.createdAt();
    }

    @Override
    public Duration visibilityTimeout() {
        return Duration.ofNanos(row.visibilityTimeoutNs());
    }

    @Override
    public Instant claimExpiresAt() {
        return claimExpiresAt;
    }

    @Override
    public boolean ack() {
        return end(null, null);
    }

    @Override
    public boolean complete(Object result) {
        Objects.requireNonNull(result, "result");
        @SuppressWarnings("unchecked")
        Serde<Object> resultSerde = (Serde<Object>) Serde.forType(result.getClass());
        byte[] bytes;
        try {
            bytes = resultSerde.serialize(result);
        } catch (Exception e) {
            throw new SluiceException(ErrorCode.PAYLOAD_NOT_SERIALIZABLE, "the result of job " + row.id() + " (type "
                    + result.getClass().getName() + ") could not be serialized: " + e.getClass().getSimpleName(), e);
        }
        return complete(bytes, resultSerde.contentType());
    }

    @Override
    public boolean complete(byte[] result, String contentType) {
        checkResult(row.id(), result, contentType, maxResultBytes);
        return end(result.clone(), contentType);
    }

    /**
     * The checks of a result before any round trip (also {@code JobClaim.complete}): at most {@code maxResultBytes},
     * a content type of 1 to 255 characters without control characters.
     *
     * @throws SluiceException {@link ErrorCode#PAYLOAD_TOO_LARGE}, {@link ErrorCode#INVALID_ARGUMENT}
     */
    public static void checkResult(long id, byte[] result, String contentType, int maxResultBytes) {
        Objects.requireNonNull(result, "result");
        Objects.requireNonNull(contentType, "contentType");
        if (result.length > maxResultBytes) {
            throw new SluiceException(ErrorCode.PAYLOAD_TOO_LARGE, "the result of job " + id + " is " + result.length
                    + " bytes; the queue accepts at most " + maxResultBytes + " (maxPayloadBytes)");
        }
        if (contentType.isEmpty() || contentType.length() > 255 || dev.sluice.internal.text.Echo.firstControl(contentType) >= 0) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "a result content type is 1 to 255 characters without"
                    + " control characters");
        }
    }

    /**
     * The check of a retry delay (also {@code JobClaim.retry}): 0 to {@link JobEncoder#MAX_DELAY}.
     *
     * @throws SluiceException {@link ErrorCode#INVALID_QUEUE_OPTIONS}
     */
    public static void checkRetryDelay(Duration delay) {
        Objects.requireNonNull(delay, "delay");
        if (delay.isNegative() || delay.compareTo(JobEncoder.MAX_DELAY) > 0) {
            throw new SluiceException(ErrorCode.INVALID_QUEUE_OPTIONS, "retry delay must be between 0 and "
                    + JobEncoder.MAX_DELAY + " (got " + delay + ")");
        }
    }

    private boolean end(byte[] result, String contentType) {
        resolved = true;
        boolean ended = endNow(result, contentType);
        acked(ended);
        return ended;
    }

    /** Counts the worker's ack of this attempt: {@code deleted} false when the claim was lost. */
    void acked(boolean deleted) {
        outcome = deleted ? JobOutcome.ACK : JobOutcome.LOST;
        meters.count(outcome);
    }

    /** How the attempt ended as counted in the meters, or null while it is not (yet) resolved. */
    JobOutcome outcome() {
        return outcome;
    }

    /** Counts a settle (retry, fail, terminal) by what it did, and says whether it changed the job. */
    private boolean settled(JobStore.Settled s, JobOutcome pending, JobOutcome dead) {
        outcome = switch (s) {
            case PENDING -> pending;
            case DEAD -> dead;
            case CANCELLED -> JobOutcome.CANCELLED;
            case REFUSED -> JobOutcome.LOST;
        };
        meters.count(outcome);
        return s != JobStore.Settled.REFUSED;
    }

    private boolean endNow(byte[] result, String contentType) {
        if (completer == null) {
            if (result == null && !row.keepsRuns()
                    && !store.ackAll(new long[] {row.id()}, new UUID[] {row.token()}).isEmpty()) {
                return true; // the plain ack: nothing else to write
            }
            return store.finishOne(row.id(), row.token(), result, contentType) != null;
        }
        try {
            return completer.ack(row.id(), row.token(), result, contentType, row.keepsRuns()).join();
        } catch (java.util.concurrent.CompletionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw e;
        }
    }

    @Override
    public boolean cancelled() {
        return cancelled;
    }

    /**
     * The worker's ack after its handler returned: queued to the completer without waiting; the future
     * says whether the row was deleted (false: the claim was lost, nothing changed).
     */
    java.util.concurrent.CompletableFuture<Boolean> ackLater() {
        resolved = true;
        if (completer == null) {
            return java.util.concurrent.CompletableFuture.completedFuture(
                    store.finishOne(row.id(), row.token(), null, null) != null);
        }
        return completer.ack(row.id(), row.token(), null, null, row.keepsRuns());
    }

    @Override
    public boolean retry() {
        return retry(Duration.ZERO);
    }

    @Override
    public boolean retry(Duration delay) {
        checkRetryDelay(delay);
        resolved = true;
        return settled(store.settle(row.id(), row.token(), delay, "retry requested after attempt " + row.attempt(), false),
                JobOutcome.RETRY, JobOutcome.DEAD);
    }

    // Every text a handle stores goes through ErrorText: a NUL in it made the settle fail and left the job processing.
    @Override
    public boolean fail(Throwable error) {
        Objects.requireNonNull(error, "error");
        return fail(ErrorText.stackTrace(error));
    }

    @Override
    public boolean fail(String error) {
        Objects.requireNonNull(error, "error");
        resolved = true;
        return settled(store.settle(row.id(), row.token(), null, ErrorText.clean(error), false), JobOutcome.FAIL,
                JobOutcome.DEAD);
    }

    @Override
    public boolean terminal(String reason) {
        Objects.requireNonNull(reason, "reason");
        resolved = true;
        return settled(store.settle(row.id(), row.token(), null, ErrorText.clean(reason), true), JobOutcome.TERMINAL,
                JobOutcome.TERMINAL);
    }

    @Override
    public boolean heartbeat() {
        JobStore.Beat beat = store.heartbeat(new long[] {row.id()}, new UUID[] {row.token()}).get(row.id());
        if (beat == null) {
            return false;
        }
        extended(beat);
        return true;
    }

    /** Gives the claim back unfinished (the worker's drain); the attempt is not counted. */
    boolean release() {
        resolved = true;
        return store.release(row.id(), row.token());
    }


    @Override
    public String toString() {
        return "JobHandle[" + row.queue() + "#" + row.id() + " attempt " + row.attempt() + "]";
    }
}
