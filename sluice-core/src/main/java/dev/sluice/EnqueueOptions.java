package dev.sluice;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Per-job enqueue options. Every field is optional; {@link #NONE} sets none. Checked at enqueue,
 * before any round trip ({@link ErrorCode#INVALID_QUEUE_OPTIONS}, {@link ErrorCode#INVALID_KEY},
 * {@link ErrorCode#INVALID_HEADERS}).
 *
 * @param priority  higher runs first (default 0; -1000 to 1000); keep the number of distinct
 *                  priorities of a queue small, the claim visits each one that has pending jobs
 * @param delay     run no earlier than this long after the enqueue commits, by the database clock;
 *                  wins over {@code runAt} when both are set (0 to 3650 days)
 * @param runAt     run no earlier than this instant (at most 3650 days ahead, like the delay)
 * @param expiresAt a job still unclaimed at this instant is moved to the dead jobs with reason
 *                  {@link DeadReason#EXPIRED} and never runs (a job already running is not interrupted;
 *                  at most 3650 days ahead)
 * @param uniqueKey at most one live (pending or processing) job per (queue, key): enqueueing a duplicate
 *                  returns the live job's id and writes nothing; once that job is acked or dead the key
 *                  is free again (1 to 256 characters, no control characters)
 * @param headers   a small string map stored as {@code jsonb} (trace context goes here)
 * @param after     parent job ids (of any queue): the job is not claimable until every parent succeeded. A parent
 *                  must exist when the job is enqueued — live, or ended with a run record (a parent that may finish
 *                  first must keep runs); an unknown id is {@link ErrorCode#PARENT_NOT_FOUND}. At most 10,000
 *                  distinct ids; empty for none
 * @param onParentFailure what a parent that ends dead, discarded or cancelled does to this job (default
 *                  {@link ParentFailure#CANCEL})
 */
public record EnqueueOptions(int priority, Duration delay, Instant runAt, Instant expiresAt, String uniqueKey,
                             Map<String, String> headers, List<Long> after, ParentFailure onParentFailure) {
    /** The lowest priority. */
    public static final int MIN_PRIORITY = -1000;
    /** The highest priority. */
    public static final int MAX_PRIORITY = 1000;

    /** No options: priority 0, ready at once, no expiry, no unique key, no headers. */
    public static final EnqueueOptions NONE = new EnqueueOptions(0, null, null, null, null, Map.of());
    /** The most parents a job may wait for. */
    public static final int MAX_PARENTS = 10_000;

    /** Copies the headers and the parents; the field checks happen at enqueue. */
    public EnqueueOptions {
        headers = headers == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(headers));
        after = after == null ? List.of() : Collections.unmodifiableList(new ArrayList<>(after));
        onParentFailure = onParentFailure == null ? ParentFailure.CANCEL : onParentFailure;
    }

    /** Options without parents (the form before dependencies existed). */
    public EnqueueOptions(int priority, Duration delay, Instant runAt, Instant expiresAt, String uniqueKey,
                          Map<String, String> headers) {
        this(priority, delay, runAt, expiresAt, uniqueKey, headers, List.of(), ParentFailure.CANCEL);
    }

    /** Options with only parents. */
    public static EnqueueOptions after(List<Long> parents) {
        return builder().after(parents).build();
    }

    /** A builder with nothing set. */
    public static Builder builder() {
        return new Builder();
    }

    /** Options with only a priority. */
    public static EnqueueOptions priority(int priority) {
        return builder().priority(priority).build();
    }

    /** Options with only a delay. */
    public static EnqueueOptions delay(Duration delay) {
        return builder().delay(delay).build();
    }

    /** Options with only a unique key. */
    public static EnqueueOptions unique(String uniqueKey) {
        return builder().uniqueKey(uniqueKey).build();
    }

    /** A builder starting from these options. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.priority = priority;
        b.delay = delay;
        b.runAt = runAt;
        b.expiresAt = expiresAt;
        b.uniqueKey = uniqueKey;
        b.headers.putAll(headers);
        b.after = after;
        b.onParentFailure = onParentFailure;
        return b;
    }

    /** Builds {@link EnqueueOptions}. */
    public static final class Builder {
        private int priority;
        private Duration delay;
        private Instant runAt;
        private Instant expiresAt;
        private String uniqueKey;
        private final Map<String, String> headers = new LinkedHashMap<>();
        private List<Long> after = List.of();
        private ParentFailure onParentFailure = ParentFailure.CANCEL;

        private Builder() {
        }

        /** Higher runs first (default 0). */
        public Builder priority(int priority) {
            this.priority = priority;
            return this;
        }

        /** Run no earlier than this long after the enqueue (wins over {@link #runAt}). */
        public Builder delay(Duration delay) {
            this.delay = delay;
            return this;
        }

        /** Run no earlier than this instant. */
        public Builder runAt(Instant runAt) {
            this.runAt = runAt;
            return this;
        }

        /** Drop the job to the dead jobs if it is still unclaimed at this instant. */
        public Builder expiresAt(Instant expiresAt) {
            this.expiresAt = expiresAt;
            return this;
        }

        /** At most one live job per (queue, key). */
        public Builder uniqueKey(String uniqueKey) {
            this.uniqueKey = uniqueKey;
            return this;
        }

        /** Adds a header. */
        public Builder header(String name, String value) {
            this.headers.put(name, value);
            return this;
        }

        /** Replaces all headers. */
        public Builder headers(Map<String, String> headers) {
            this.headers.clear();
            if (headers != null) {
                this.headers.putAll(headers);
            }
            return this;
        }

        /** Run only after every one of these jobs succeeded. */
        public Builder after(List<Long> parents) {
            this.after = parents == null ? List.of() : parents;
            return this;
        }

        /** Run only after every one of these jobs succeeded. */
        public Builder after(long... parents) {
            List<Long> ids = new ArrayList<>(parents.length);
            for (long id : parents) {
                ids.add(id);
            }
            this.after = ids;
            return this;
        }

        /** What a failed parent does to this job (default {@link ParentFailure#CANCEL}). */
        public Builder onParentFailure(ParentFailure policy) {
            this.onParentFailure = policy;
            return this;
        }

        /** Builds the options (checked at enqueue). */
        public EnqueueOptions build() {
            return new EnqueueOptions(priority, delay, runAt, expiresAt, uniqueKey, headers, after, onParentFailure);
        }
    }
}
