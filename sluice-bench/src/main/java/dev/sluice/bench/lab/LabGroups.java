package dev.sluice.bench.lab;

import dev.sluice.ConcurrencyPolicy;
import dev.sluice.GroupConfig;
import dev.sluice.RetryPolicy;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The consumer groups of a lab run: one per concurrency policy, one of them with bindings, and a partitioned one
 * (8 buckets, each owned by one consumer process at a time) whose keys must never run in two processes at once.
 */
final class LabGroups {
    static final String PARALLEL = "parallel";
    static final String ORDERED = "ordered";
    static final String ROUTED = "routed";
    static final String ROUTED_PATTERN = "lab.a.*";
    static final String PARTITIONED = "partitioned";
    static final int PARTITIONS = 8;
    static final List<String> ALL = List.of(PARALLEL, ORDERED, ROUTED, PARTITIONED);
    /** The groups whose keys' first deliveries must come in id order. */
    static final List<String> KEY_ORDERED = List.of(ORDERED, PARTITIONED);

    private LabGroups() {
    }

    static Map<String, GroupConfig> configs() {
        RetryPolicy quick = RetryPolicy.DEFAULT.withMaxAttempts(4).withBackoff(Duration.ofMillis(200), 2.0, Duration.ofSeconds(2));
        return Map.of(
                PARALLEL, GroupConfig.builder().retry(quick).build(),
                ORDERED, GroupConfig.builder().concurrency(ConcurrencyPolicy.ORDERED).retry(quick).build(),
                ROUTED, GroupConfig.builder().concurrency(ConcurrencyPolicy.EXCLUSIVE).bindings(ROUTED_PATTERN).retry(quick).build(),
                PARTITIONED, GroupConfig.builder().partitions(PARTITIONS).retry(quick).build());
    }

    /** The regex the checker matches routing keys with, per group (null: no bindings). */
    static String regex(String group) {
        return ROUTED.equals(group) ? dev.sluice.BindingPattern.toRegex(ROUTED_PATTERN) : null;
    }
}
