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
 * @param maxRangeReclaims reclaims of one range before its messages are quarantined as individual rows (default 3); for
 *                         a partitioned group, re-runs of a bucket's batch without a commit (docs/partitions.md)
 * @param deadLetterRetention how long a dead letter is kept (from the time it went dead) before the janitor deletes it
 *                         (default 14 days; {@code null} means the default). A dead letter also keeps its message's log
 *                         partition from retention until it is redriven and resolved, purged, or swept
 * @param partitions       0 (the default): not partitioned. N in [1, {@value #MAX_PARTITIONS}]: the group is consumed
 *                         bucket by bucket — a message goes to bucket {@code hash(key) mod N} (keyless messages to
 *                         {@code id mod N}), each bucket has its own position and is owned by one member at a time, and
 *                         messages of a key run one at a time in id order. Implies {@link ConcurrencyPolicy#ORDERED};
 *                         fixed once the group exists (docs/partitions.md)
 */
public record GroupConfig(StartPosition start, List<String> bindings, ConcurrencyPolicy concurrency, RetryPolicy retry,
                          DeliveryLogMode deliveryLogMode, Set<Integer> acceptVersions, int maxRangeReclaims,
                          Duration deadLetterRetention, int partitions) {

    /** Default retention of a group's dead letters. */
    public static final Duration DEFAULT_DEAD_LETTER_RETENTION = Duration.ofDays(14);

    /** The most buckets a partitioned group may have. */
    public static final int MAX_PARTITIONS = 1024;

    /** The declaration without partitions (the shape before partitioned groups). */
    public GroupConfig(StartPosition start, List<String> bindings, ConcurrencyPolicy concurrency, RetryPolicy retry,
                       DeliveryLogMode deliveryLogMode, Set<Integer> acceptVersions, int maxRangeReclaims,
                       Duration deadLetterRetention) {
        this(start, bindings, concurrency, retry, deliveryLogMode, acceptVersions, maxRangeReclaims, deadLetterRetention, 0);
    }

    public GroupConfig {
        start = start == null ? StartPosition.beginning() : start;
        bindings = bindings == null ? List.of() : List.copyOf(bindings);
        if (partitions < 0 || partitions > MAX_PARTITIONS) {
            throw new SluiceException(ErrorCode.INVALID_CONFIG,
                    "partitions must be between 1 and " + MAX_PARTITIONS + " (or 0: not partitioned); got " + partitions);
        }
        if (partitions > 0 && concurrency != null && concurrency != ConcurrencyPolicy.ORDERED) {
            throw new SluiceException(ErrorCode.INVALID_CONFIG, "a partitioned group keeps per-key order: its concurrency is "
                    + "'ordered' (leave it unset); got '" + concurrency.sqlValue() + "'");
        }
        concurrency = concurrency == null ? (partitions > 0 ? ConcurrencyPolicy.ORDERED : ConcurrencyPolicy.PARALLEL) : concurrency;
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

    /** Whether the group is consumed bucket by bucket ({@link #partitions} > 0). */
    public boolean partitioned() {
        return partitions > 0;
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
        private int partitions;

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

        /**
         * Consumes the group bucket by bucket with {@code n} buckets (1..{@value GroupConfig#MAX_PARTITIONS}; 0: not
         * partitioned, the default). Per-key order with N-way parallelism across members; fixed once the group exists.
         */
        public Builder partitions(int n) {
            this.partitions = n;
            return this;
        }

        public GroupConfig build() {
            return new GroupConfig(start, bindings, concurrency, retry, deliveryLogMode, acceptVersions, maxRangeReclaims,
                    deadLetterRetention, partitions);
        }
    }
}
