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
    /** The groups that run one message of a key at a time: the next of a key waits while another one runs. */
    static final List<String> KEY_HELD = List.of(ORDERED, ROUTED, PARTITIONED);

    private LabGroups() {
    }

    static Map<String, GroupConfig> configs() {
        // Only first attempts fail transiently, so 10 attempts are never used up by failures; a message redelivered after
        // kills also counts attempts, and 10 keeps that from ever making it dead (its dead letter would be swept, and the
        // checker counts a message as dead only by a dead letter or a terminal handler call).
        RetryPolicy quick = RetryPolicy.DEFAULT.withMaxAttempts(10).withBackoff(Duration.ofMillis(200), 2.0, Duration.ofSeconds(2));
        // Dead letters are swept 20 s after they went dead, so retention can drop the partitions that held them.
        Duration deadLetters = Duration.ofSeconds(20);
        return Map.of(
                PARALLEL, GroupConfig.builder().retry(quick).deadLetterRetention(deadLetters).build(),
                ORDERED, GroupConfig.builder().concurrency(ConcurrencyPolicy.ORDERED).retry(quick).deadLetterRetention(deadLetters).build(),
                ROUTED, GroupConfig.builder().concurrency(ConcurrencyPolicy.EXCLUSIVE).bindings(ROUTED_PATTERN).retry(quick)
                        .deadLetterRetention(deadLetters).build(),
                PARTITIONED, GroupConfig.builder().partitions(PARTITIONS).retry(quick).deadLetterRetention(deadLetters).build());
    }

    /** The regex the checker matches routing keys with, per group (null: no bindings). */
    static String regex(String group) {
        return ROUTED.equals(group) ? dev.sluice.BindingPattern.toRegex(ROUTED_PATTERN) : null;
    }
}
