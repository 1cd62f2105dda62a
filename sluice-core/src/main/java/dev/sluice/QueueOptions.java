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
 *                            (default 1 MiB; 1 byte to 64 MiB)
 */
public record QueueOptions(Duration visibilityTimeout, int maxAttempts, Duration backoffBase, Duration maxBackoff,
                           Duration deadLetterRetention, int maxPayloadBytes) {
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

    /** The defaults: 30 s visibility, 25 attempts, 1 s backoff capped at 1 h, 7 d retention, 1 MiB payloads. */
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

        private Builder(QueueOptions from) {
            this.visibilityTimeout = from.visibilityTimeout;
            this.maxAttempts = from.maxAttempts;
            this.backoffBase = from.backoffBase;
            this.maxBackoff = from.maxBackoff;
            this.deadLetterRetention = from.deadLetterRetention;
            this.maxPayloadBytes = from.maxPayloadBytes;
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

        /** Checks the values and builds the options. */
        public QueueOptions build() {
            return new QueueOptions(visibilityTimeout, maxAttempts, backoffBase, maxBackoff, deadLetterRetention, maxPayloadBytes);
        }
    }
}
