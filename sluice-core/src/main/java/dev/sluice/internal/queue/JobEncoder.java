package dev.sluice.internal.queue;

import dev.sluice.EnqueueOptions;
import dev.sluice.ErrorCode;
import dev.sluice.QueueOptions;
import dev.sluice.Serde;
import dev.sluice.SluiceException;
import dev.sluice.internal.text.Echo;
import java.time.Duration;
import java.time.Instant;

/**
 * Validates and encodes one job before any round trip: payload present and within the queue's limit,
 * unique key and headers within bounds, options consistent. Every rejection is a coded error and
 * nothing is written. The limits on keys and headers are those of stream messages.
 */
public final class JobEncoder<T> {
    static final int MAX_KEY_LENGTH = 256;
    /** The longest delay accepted (beyond it a job would outlive any sensible deployment). */
    static final Duration MAX_DELAY = Duration.ofDays(3650);
    /** The earliest runAt or expiresAt accepted: far enough back for any "now", inside what the microsecond encoding holds. */
    static final Instant MIN_TIME = Instant.parse("0001-01-01T00:00:00Z");

    private static final long[] NO_PARENTS = new long[0];

    private final Serde<T> serde;
    private final int maxPayloadBytes;
    private final EncodedJob.Stamps stamps;
    /** Adds the caller's trace context to the headers (docs/tracing.md); no-op without OpenTelemetry. */
    private final dev.sluice.internal.tracing.Tracing tracing;

    /** An encoder for one queue handle: its serde, its payload limit and the options it stamps (no tracing). */
    public JobEncoder(Serde<T> serde, QueueOptions options) {
        this(serde, options, dev.sluice.internal.tracing.NoTracing.INSTANCE);
    }

    /** As {@link #JobEncoder(Serde, QueueOptions)}; {@code tracing} adds the enqueuing thread's trace context. */
    public JobEncoder(Serde<T> serde, QueueOptions options, dev.sluice.internal.tracing.Tracing tracing) {
        this.serde = serde;
        this.tracing = tracing;
        this.maxPayloadBytes = options.maxPayloadBytes();
        this.stamps = new EncodedJob.Stamps(options.visibilityTimeout().toNanos(), options.maxAttempts(),
                options.backoffBase().toNanos(), options.maxBackoff().toNanos(), options.deadLetterRetention().toNanos(),
                options.keepRuns() == null ? null : options.keepRuns().toNanos(),
                options.eventRetention() == null ? null : options.eventRetention().toNanos());
    }

    /** Encodes a job; {@code options} may be null (none). */
    public EncodedJob encode(T payload, EnqueueOptions options) {
        if (payload == null) {
            throw new SluiceException(ErrorCode.NULL_PAYLOAD, "the job payload is null");
        }
        EnqueueOptions o = options == null ? EnqueueOptions.NONE : options;
        if (o.priority() < EnqueueOptions.MIN_PRIORITY || o.priority() > EnqueueOptions.MAX_PRIORITY) {
            throw invalid("priority must be between " + EnqueueOptions.MIN_PRIORITY + " and " + EnqueueOptions.MAX_PRIORITY
                    + " (got " + o.priority() + ")");
        }
        if (o.delay() != null && (o.delay().isNegative() || o.delay().compareTo(MAX_DELAY) > 0)) {
            throw invalid("delay must be between 0 and " + MAX_DELAY + " (got " + o.delay() + ")");
        }
        // Times are capped like the delay: a job due in year 200000 would never run, and a year 1e9 overflows.
        checkTime("runAt", o.runAt());
        checkTime("expiresAt", o.expiresAt());
        if (o.delay() == null && o.runAt() != null && o.expiresAt() != null && !o.expiresAt().isAfter(o.runAt())) {
            throw invalid("expiresAt (" + o.expiresAt() + ") must be after runAt (" + o.runAt() + "): the job could never run");
        }
        checkKey(o.uniqueKey());
        long[] parents = parents(o);
        String headers = tracing.encodeHeaders(o.headers());
        byte[] bytes;
        try {
            bytes = serde.serialize(payload);
        } catch (Exception e) {
            throw new SluiceException(ErrorCode.PAYLOAD_NOT_SERIALIZABLE, "the job payload of type "
                    + payload.getClass().getName() + " could not be serialized: " + e.getClass().getSimpleName(), e);
        }
        if (bytes == null) {
            throw new SluiceException(ErrorCode.NULL_PAYLOAD, "the serde returned no bytes");
        }
        if (bytes.length > maxPayloadBytes) {
            throw new SluiceException(ErrorCode.PAYLOAD_TOO_LARGE, "the job payload is " + bytes.length
                    + " bytes; the queue accepts at most " + maxPayloadBytes);
        }
        // delay wins over runAt; keeping only one of them makes the rule visible in the statement.
        return new EncodedJob(bytes, serde.contentType(), headers, o.priority(), o.delay(),
                o.delay() == null ? o.runAt() : null, o.expiresAt(), o.uniqueKey(), stamps, parents, o.onParentFailure().dbValue());
    }

    /** The distinct parent ids in ascending order, checked: positive, at most {@link EnqueueOptions#MAX_PARENTS}. */
    private static long[] parents(EnqueueOptions o) {
        if (o.after().isEmpty()) {
            return NO_PARENTS;
        }
        java.util.TreeSet<Long> ids = new java.util.TreeSet<>();
        for (Long id : o.after()) {
            if (id == null || id < 1) {
                throw invalid("parent job ids must be positive (got " + id + ")");
            }
            ids.add(id);
        }
        if (ids.size() > EnqueueOptions.MAX_PARENTS) {
            throw invalid("a job waits for at most " + EnqueueOptions.MAX_PARENTS + " parents (got " + ids.size() + ")");
        }
        return ids.stream().mapToLong(Long::longValue).toArray();
    }

    private static SluiceException invalid(String problem) {
        return new SluiceException(ErrorCode.INVALID_QUEUE_OPTIONS, problem);
    }

    private static void checkTime(String what, Instant t) {
        if (t != null && (t.isBefore(MIN_TIME) || t.isAfter(Instant.now().plus(MAX_DELAY)))) {
            throw invalid(what + " must lie between " + MIN_TIME + " and " + MAX_DELAY.toDays() + " days from now (got "
                    + t + ")");
        }
    }

    private static void checkKey(String key) {
        if (key == null) {
            return;
        }
        if (key.isEmpty() || key.length() > MAX_KEY_LENGTH) {
            throw new SluiceException(ErrorCode.INVALID_KEY, "unique key must be 1 to " + MAX_KEY_LENGTH
                    + " characters (got " + key.length() + ")");
        }
        int control = Echo.firstControl(key);
        if (control >= 0) {
            // Keys are shown by operators' tools; a control character could drive their terminal.
            throw new SluiceException(ErrorCode.INVALID_KEY, "unique key must not contain control characters (found "
                    + Echo.describeControl(key, control) + ")");
        }
    }

}
