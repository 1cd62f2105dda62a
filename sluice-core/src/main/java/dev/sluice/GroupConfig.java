package dev.sluice;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * A consumer group's declared configuration. Declarations are whole documents (unset fields mean
 * defaults), the newest wins, and every declaration is logged. {@code start} is read only when the
 * group is created.
 *
 * @param start            where a new group starts (default {@link StartPosition#beginning()})
 * @param bindings         routing patterns ({@code *} any run of characters including dots, {@code ?}
 *                         one character, anchored); empty means every message. A group with bindings sees
 *                         only messages whose routing key matches one pattern. Changes apply forward.
 * @param concurrency      the key policy for every message of the group (default {@link ConcurrencyPolicy#PARALLEL})
 * @param retry            retries, backoff and dead letters (default {@link RetryPolicy#DEFAULT})
 * @param deliveryLogMode  override of the stream's delivery-log mode, or {@code null} to use the stream's
 * @param acceptVersions   schema versions the group claims; empty means the consuming payload type's
 *                         version ({@code byte[]} consumers accept every version). Others are skipped and counted.
 * @param maxRangeReclaims reclaims of one range before its messages are quarantined as individual rows (default 3)
 * @param deadLetterRetention how long a dead letter is kept (from the time it went dead) before the janitor deletes it
 *                         (default 14 days; {@code null} means the default). A dead letter also keeps its message's log
 *                         partition from retention until it is redriven and resolved, purged, or swept
 */
public record GroupConfig(StartPosition start, List<String> bindings, ConcurrencyPolicy concurrency, RetryPolicy retry,
                          DeliveryLogMode deliveryLogMode, Set<Integer> acceptVersions, int maxRangeReclaims,
                          Duration deadLetterRetention) {

    /** Default retention of a group's dead letters. */
    public static final Duration DEFAULT_DEAD_LETTER_RETENTION = Duration.ofDays(14);

    public GroupConfig {
        start = start == null ? StartPosition.beginning() : start;
        bindings = bindings == null ? List.of() : List.copyOf(bindings);
        concurrency = concurrency == null ? ConcurrencyPolicy.PARALLEL : concurrency;
        retry = retry == null ? RetryPolicy.DEFAULT : retry;
        acceptVersions = acceptVersions == null ? Set.of() : Set.copyOf(acceptVersions);
        deadLetterRetention = deadLetterRetention == null ? DEFAULT_DEAD_LETTER_RETENTION : deadLetterRetention;
        if (deadLetterRetention.isNegative() || deadLetterRetention.isZero()) {
            throw new SluiceException(ErrorCode.INVALID_CONFIG, "deadLetterRetention must be positive (got " + deadLetterRetention + ")");
        }
        try {
            deadLetterRetention.toNanos();
        } catch (ArithmeticException e) {
            throw new SluiceException(ErrorCode.INVALID_CONFIG,
                    "deadLetterRetention must fit in a 64-bit count of nanoseconds (about 292 years)");
        }
        for (Integer v : acceptVersions) {
            if (v == null || v < 1) {
                throw new SluiceException(ErrorCode.INVALID_CONFIG, "accepted schema versions must be at least 1");
            }
        }
        if (maxRangeReclaims < 0 || maxRangeReclaims > 100) {
            throw new SluiceException(ErrorCode.INVALID_CONFIG, "maxRangeReclaims must be between 0 and 100 (got " + maxRangeReclaims + ")");
        }
        if (bindings.size() > 100) {
            throw new SluiceException(ErrorCode.INVALID_BINDING, "at most 100 binding patterns per group");
        }
        for (String b : bindings) {
            BindingPattern.validate(b);
        }
    }

    /** The defaults: start at the beginning, no bindings, parallel, default retries. */
    public static GroupConfig defaults() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Builds a {@link GroupConfig}. */
    public static final class Builder {
        private StartPosition start;
        private List<String> bindings = List.of();
        private ConcurrencyPolicy concurrency;
        private RetryPolicy retry;
        private DeliveryLogMode deliveryLogMode;
        private Set<Integer> acceptVersions = Set.of();
        private int maxRangeReclaims = 3;
        private Duration deadLetterRetention = DEFAULT_DEAD_LETTER_RETENTION;

        private Builder() {
        }

        public Builder start(StartPosition start) {
            this.start = start;
            return this;
        }

        public Builder bindings(String... patterns) {
            this.bindings = List.of(patterns);
            return this;
        }

        public Builder bindings(List<String> patterns) {
            this.bindings = Objects.requireNonNull(patterns, "patterns");
            return this;
        }

        public Builder concurrency(ConcurrencyPolicy policy) {
            this.concurrency = policy;
            return this;
        }

        public Builder retry(RetryPolicy retry) {
            this.retry = retry;
            return this;
        }

        public Builder deliveryLogMode(DeliveryLogMode mode) {
            this.deliveryLogMode = mode;
            return this;
        }

        public Builder acceptVersions(Integer... versions) {
            this.acceptVersions = Set.of(versions);
            return this;
        }

        public Builder maxRangeReclaims(int n) {
            this.maxRangeReclaims = n;
            return this;
        }

        /** How long a dead letter is kept before the janitor deletes it (positive; default 14 days). */
        public Builder deadLetterRetention(Duration retention) {
            this.deadLetterRetention = Objects.requireNonNull(retention, "deadLetterRetention");
            return this;
        }

        public GroupConfig build() {
            return new GroupConfig(start, bindings, concurrency, retry, deliveryLogMode, acceptVersions, maxRangeReclaims,
                    deadLetterRetention);
        }
    }
}
