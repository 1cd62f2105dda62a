package dev.sluice;

import java.time.Duration;
import java.util.Objects;

/**
 * The options of a job queue, <b>stamped on every job at enqueue</b>: a claim, a failure or the rescuer
 * reads them from the job's own row, never from a registry, so two processes may enqueue to one queue
 * with different options and each job keeps the ones it was enqueued with. Queues need no registration.
 *
 * <p>Every value is checked when the record is built; an out-of-range value raises
 * {@link ErrorCode#INVALID_QUEUE_OPTIONS} before any round trip.
 *
 * @param visibilityTimeout   how long a claim holds a job without a heartbeat; a worker heartbeats every
 *                            third of it while the handler runs, so it bounds crash recovery, not handler
 *                            duration (default 30 s; 200 ms to 24 h)
 * @param maxAttempts         claims a job may use, counting the first; a failure on the last one moves the job
 *                            to the dead jobs (default 25, like River; 1 to 1000)
 * @param backoffBase         the wait after the first failed attempt; attempt {@code n} waits
 *                            {@code backoffBase × 2^(n-1)}, minus up to 10 % jitter (default 1 s; 1 ms to 24 h)
 * @param maxBackoff          the cap of that wait (default 1 h; at least {@code backoffBase}, at most 30 d)
 * @param deadLetterRetention how long a dead job is kept before the maintenance sweep deletes it
 *                            (default 7 d; 1 s to 3650 d)
 * @param maxPayloadBytes     the largest encoded payload accepted, checked before any round trip
 *                            (default 1 MiB; 1 byte to 64 MiB); also the largest result a handler may return
 * @param keepRuns            how long an ended job's run record (status, timings, result) is kept, and whether its
 *                            events are written at all: {@code null} (the default) keeps neither, so a drain costs
 *                            what it always did (1 s to 3650 d; see docs/runs.md)
 * @param keepEvents          how long the event trail is kept, independently of the record ({@code null}: as long
 *                            as {@code keepRuns}; 1 s to 3650 d; needs {@code keepRuns})
 */
public record QueueOptions(Duration visibilityTimeout, int maxAttempts, Duration backoffBase, Duration maxBackoff,
                           Duration deadLetterRetention, int maxPayloadBytes, Duration keepRuns, Duration keepEvents) {
    /** The default visibility timeout (30 s). */
    public static final Duration DEFAULT_VISIBILITY_TIMEOUT = Duration.ofSeconds(30);
    /** The default number of attempts (25). */
    public static final int DEFAULT_MAX_ATTEMPTS = 25;
    /** The default backoff base (1 s). */
    public static final Duration DEFAULT_BACKOFF_BASE = Duration.ofSeconds(1);
    /** The default backoff cap (1 h). */
    public static final Duration DEFAULT_MAX_BACKOFF = Duration.ofHours(1);
    /** The default dead-job retention (7 days). */
    public static final Duration DEFAULT_DEAD_LETTER_RETENTION = Duration.ofDays(7);
    /** The default payload limit (1 MiB). */
    public static final int DEFAULT_MAX_PAYLOAD_BYTES = 1 << 20;
    /** The largest payload limit a queue may set (64 MiB). */
    public static final int MAX_PAYLOAD_LIMIT = 64 << 20;

    /** Checks every field; see the class documentation for the ranges. */
    public QueueOptions {
        within("visibilityTimeout", visibilityTimeout, Duration.ofMillis(200), Duration.ofHours(24));
        if (maxAttempts < 1 || maxAttempts > 1000) {
            throw invalid("maxAttempts must be between 1 and 1000 (got " + maxAttempts + ")");
        }
        within("backoffBase", backoffBase, Duration.ofMillis(1), Duration.ofHours(24));
        within("maxBackoff", maxBackoff, backoffBase, Duration.ofDays(30));
        within("deadLetterRetention", deadLetterRetention, Duration.ofSeconds(1), Duration.ofDays(3650));
        if (maxPayloadBytes < 1 || maxPayloadBytes > MAX_PAYLOAD_LIMIT) {
            throw invalid("maxPayloadBytes must be between 1 and " + MAX_PAYLOAD_LIMIT + " (got " + maxPayloadBytes + ")");
        }
        if (keepRuns != null) {
            within("keepRuns", keepRuns, Duration.ofSeconds(1), Duration.ofDays(3650));
        }
        if (keepEvents != null) {
            if (keepRuns == null) {
                throw invalid("keepEvents needs keepRuns: events are written only for jobs that keep runs");
            }
            within("keepEvents", keepEvents, Duration.ofSeconds(1), Duration.ofDays(3650));
        }
    }

    /** The options without run records (the form before keepRuns existed). */
    public QueueOptions(Duration visibilityTimeout, int maxAttempts, Duration backoffBase, Duration maxBackoff,
                        Duration deadLetterRetention, int maxPayloadBytes) {
        this(visibilityTimeout, maxAttempts, backoffBase, maxBackoff, deadLetterRetention, maxPayloadBytes, null, null);
    }

    /** How long the event trail is kept: {@link #keepEvents()}, else {@link #keepRuns()} (null when runs are not kept). */
    public Duration eventRetention() {
        return keepEvents != null ? keepEvents : keepRuns;
    }

    private static void within(String field, Duration value, Duration min, Duration max) {
        if (value == null) {
            throw invalid(field + " must be set");
        }
        if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
            throw invalid(field + " must be between " + min + " and " + max + " (got " + value + ")");
        }
    }

    private static SluiceException invalid(String problem) {
        return new SluiceException(ErrorCode.INVALID_QUEUE_OPTIONS, problem);
    }

    /** The defaults: 30 s visibility, 25 attempts, 1 s backoff capped at 1 h, 7 d retention, 1 MiB payloads, no run records. */
    public static QueueOptions defaults() {
        return new QueueOptions(DEFAULT_VISIBILITY_TIMEOUT, DEFAULT_MAX_ATTEMPTS, DEFAULT_BACKOFF_BASE, DEFAULT_MAX_BACKOFF,
                DEFAULT_DEAD_LETTER_RETENTION, DEFAULT_MAX_PAYLOAD_BYTES);
    }

    /** A builder starting from the defaults. */
    public static Builder builder() {
        return new Builder(defaults());
    }

    /** A builder starting from these options. */
    public Builder toBuilder() {
        return new Builder(this);
    }

    /** Builds {@link QueueOptions}; {@link #build()} checks the values. */
    public static final class Builder {
        private Duration visibilityTimeout;
        private int maxAttempts;
        private Duration backoffBase;
        private Duration maxBackoff;
        private Duration deadLetterRetention;
        private int maxPayloadBytes;
        private Duration keepRuns;
        private Duration keepEvents;

        private Builder(QueueOptions from) {
            this.visibilityTimeout = from.visibilityTimeout;
            this.maxAttempts = from.maxAttempts;
            this.backoffBase = from.backoffBase;
            this.maxBackoff = from.maxBackoff;
            this.deadLetterRetention = from.deadLetterRetention;
            this.maxPayloadBytes = from.maxPayloadBytes;
            this.keepRuns = from.keepRuns;
            this.keepEvents = from.keepEvents;
        }

        /** How long a claim holds a job without a heartbeat. */
        public Builder visibilityTimeout(Duration d) {
            this.visibilityTimeout = Objects.requireNonNull(d, "visibilityTimeout");
            return this;
        }

        /** Claims a job may use, counting the first. */
        public Builder maxAttempts(int n) {
            this.maxAttempts = n;
            return this;
        }

        /** The wait after the first failed attempt (doubling after each further one). */
        public Builder backoffBase(Duration d) {
            this.backoffBase = Objects.requireNonNull(d, "backoffBase");
            return this;
        }

        /** The cap of the backoff. */
        public Builder maxBackoff(Duration d) {
            this.maxBackoff = Objects.requireNonNull(d, "maxBackoff");
            return this;
        }

        /** How long dead jobs are kept. */
        public Builder deadLetterRetention(Duration d) {
            this.deadLetterRetention = Objects.requireNonNull(d, "deadLetterRetention");
            return this;
        }

        /** The largest encoded payload accepted. */
        public Builder maxPayloadBytes(int n) {
            this.maxPayloadBytes = n;
            return this;
        }

        /** Keep a run record of every ended job (and its event trail) this long; {@code null} keeps none. */
        public Builder keepRuns(Duration d) {
            this.keepRuns = d;
            return this;
        }

        /** Keep the event trail this long instead of {@link #keepRuns}; {@code null}: as long as the records. */
        public Builder keepEvents(Duration d) {
            this.keepEvents = d;
            return this;
        }

        /** Checks the values and builds the options. */
        public QueueOptions build() {
            return new QueueOptions(visibilityTimeout, maxAttempts, backoffBase, maxBackoff, deadLetterRetention, maxPayloadBytes,
                    keepRuns, keepEvents);
        }
    }
}
