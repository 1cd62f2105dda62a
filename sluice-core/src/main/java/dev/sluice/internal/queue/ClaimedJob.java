package dev.sluice.internal.queue;

import dev.sluice.ErrorCode;
import dev.sluice.JobHandle;
import dev.sluice.Serde;
import dev.sluice.SluiceException;
import java.io.PrintWriter;
import java.io.StringWriter;
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
    /** Stored error texts are clipped to this many characters (message plus stack trace). */
    static final int MAX_ERROR_CHARS = 8_000;

    private final JobStore store;
    private final JobStore.Claimed row;
    private final Serde<T> serde;
    private volatile Instant claimExpiresAt;
    private volatile boolean resolved;
    private volatile boolean decoded;
    private T payload;

    /** A handle on a claimed row; {@code serde} decodes the payload on first use. */
    public ClaimedJob(JobStore store, JobStore.Claimed row, Serde<T> serde) {
        this.store = store;
        this.row = row;
        this.serde = serde;
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

    /** Records a heartbeat made on the handle's behalf (the worker batches them). */
    void extended(Instant until) {
        this.claimExpiresAt = until;
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
        resolved = true;
        return store.ack(row.id(), row.token());
    }

    @Override
    public boolean retry() {
        return retry(Duration.ZERO);
    }

    @Override
    public boolean retry(Duration delay) {
        Objects.requireNonNull(delay, "delay");
        if (delay.isNegative() || delay.compareTo(JobEncoder.MAX_DELAY) > 0) {
            throw new SluiceException(ErrorCode.INVALID_QUEUE_OPTIONS, "retry delay must be between 0 and "
                    + JobEncoder.MAX_DELAY + " (got " + delay + ")");
        }
        resolved = true;
        return store.settle(row.id(), row.token(), delay, "retry requested after attempt " + row.attempt(), false)
                != JobStore.Settled.REFUSED;
    }

    @Override
    public boolean fail(Throwable error) {
        Objects.requireNonNull(error, "error");
        return fail(errorText(error));
    }

    @Override
    public boolean fail(String error) {
        Objects.requireNonNull(error, "error");
        resolved = true;
        return store.settle(row.id(), row.token(), null, clip(error), false) != JobStore.Settled.REFUSED;
    }

    @Override
    public boolean discard(String reason) {
        Objects.requireNonNull(reason, "reason");
        resolved = true;
        return store.settle(row.id(), row.token(), null, clip(reason), true) != JobStore.Settled.REFUSED;
    }

    @Override
    public boolean heartbeat() {
        Instant until = store.heartbeat(new long[] {row.id()}, new UUID[] {row.token()}).get(row.id());
        if (until == null) {
            return false;
        }
        claimExpiresAt = until;
        return true;
    }

    /** Gives the claim back unfinished (the worker's drain); the attempt is not counted. */
    boolean release() {
        resolved = true;
        return store.release(row.id(), row.token());
    }

    static String errorText(Throwable error) {
        StringWriter w = new StringWriter();
        error.printStackTrace(new PrintWriter(w));
        return clip(w.toString());
    }

    private static String clip(String s) {
        return s.length() <= MAX_ERROR_CHARS ? s : s.substring(0, MAX_ERROR_CHARS);
    }

    @Override
    public String toString() {
        return "JobHandle[" + row.queue() + "#" + row.id() + " attempt " + row.attempt() + "]";
    }
}
