package dev.sluice.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.embedded.EmbeddedPostgresServer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code e2e --partitions} and {@code rebalance} on short runs: every message delivered, per-key order kept, no key
 * running twice at once, the crash measured, and the JSON scripts read. No throughput targets: this machine is shared.
 */
class PartitionBenchmarksTest {
    private static EmbeddedPostgresServer server;

    @BeforeAll
    static void start() {
        server = SharedServer.get(); // stopped at JVM exit, shared with the other scenario tests
    }

    @Test
    void partitionedOrderedAndParallelGroupsDeliverEveryMessageInKeyOrder() throws Exception {
        E2eBenchmark.Options base = E2eBenchmark.Options.e2e().withDatabaseUrl(server.jdbcUrl()).withCallers(2)
                .withInFlight(2).withWarmup(Duration.ofMillis(500)).withDuration(Duration.ofSeconds(2));
        E2ePartitions.Result result = new E2ePartitions().run(new E2ePartitions.Options(base, 4, 200, 2),
                ScenarioListener.NONE);
        E2ePartitions.RunResult run = result.runs().get(0);
        for (E2ePartitions.Phase p : List.of(run.partitioned(), run.ordered(), run.parallel())) {
            assertThat(p.side().produced()).isPositive();
            assertThat(p.side().drained()).isTrue();
            assertThat(p.side().lost()).isZero();
        }
        assertThat(run.partitioned().perSecond()).isPositive();
        assertThat(run.parallel().perSecond()).isPositive();
        assertThat(run.orderViolations()).isZero();
        assertThat(run.partitioned().keyOverlaps()).isZero();
        JsonNode summary = BenchAssertions.summary(result, E2ePartitions.SCENARIO, List.of("partitioned_per_s",
                "ordered_per_s", "parallel_per_s", "ratio_vs_ordered", "ratio_vs_parallel", "order_violations", "lost",
                "key_overlaps", "target_vs_ordered", "target_vs_parallel"));
        assertThat(summary.get("partitions").asInt()).isEqualTo(4);
        assertThat(summary.get("consumer_clients").asInt()).isEqualTo(2);
        assertThat(summary.get("lost").asLong()).isZero();
        assertThat(summary.get("target_vs_parallel").asText()).isIn("pass", "fail");
        BenchAssertions.assertNoBenchSchemaLeft(server);
    }

    @Test
    void aCrashedMembersBucketsAreTakenOverAfterItsLease() throws Exception {
        RebalanceBenchmark.Options o = new RebalanceBenchmark.Options(server.jdbcUrl(), 8, 2, 1, 40_000, 1_000,
                Duration.ofSeconds(1), 4, 64);
        RebalanceBenchmark.Result r = new RebalanceBenchmark().run(o, ScenarioListener.NONE);
        assertThat(r.problems()).isEmpty();
        assertThat(r.victimBuckets()).isPositive();
        assertThat(r.victimHeldAfterKill()).as("the crash released nothing").isEqualTo(r.victimBuckets());
        // Not before the victim's leases could expire (they were renewed at most a lease before the crash).
        assertThat(r.reownedSeconds()).isNotNull().isLessThanOrEqualTo(o.boundSeconds());
        assertThat(r.drainedSeconds()).isNotNull().isGreaterThanOrEqualTo(r.reownedSeconds() - 1.0);
        assertThat(r.ownersAfter()).doesNotContainKey(r.victim());
        assertThat(r.lost()).isZero();
        JsonNode summary = BenchAssertions.summary(r, RebalanceBenchmark.SCENARIO, List.of("reowned_s", "drained_s",
                "lease_s", "buckets", "members_before", "members_after"));
        assertThat(summary.get("members_after").asInt()).isEqualTo(2);
        BenchAssertions.assertNoBenchSchemaLeft(server);
    }

    @Test
    void refusesNonsenseOptions() {
        E2eBenchmark.Options base = E2eBenchmark.Options.e2e();
        assertThatThrownBy(() -> E2ePartitions.Options.of(base, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("partitions");
        assertThatThrownBy(() -> E2ePartitions.Options.of(base, 1025)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> E2ePartitions.Options.of(base.withGroups(2), 4)).isInstanceOf(IllegalArgumentException.class);
        RebalanceBenchmark.Options d = RebalanceBenchmark.Options.defaults();
        assertThatThrownBy(() -> new RebalanceBenchmark.Options(null, 16, 1, 2, 100_000, 10_000, d.lease(), 8, 256))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("members");
        assertThatThrownBy(() -> new RebalanceBenchmark.Options(null, 16, 4, 2, 100_000, 10_000, Duration.ofMillis(10), 8, 256))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lease");
        assertThatThrownBy(() -> new RebalanceBenchmark.Options(null, 0, 4, 2, 100_000, 10_000, d.lease(), 8, 256))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("buckets");
    }

    @Test
    void keyOrderCountsFirstDeliveriesOutOfIdOrderPerKey() {
        KeyOrder order = new KeyOrder(2);
        deliver(order, 2, "k0"); // id 2 first, then id 1 of the same key: one violation
        deliver(order, 1, "k0");
        deliver(order, 3, "k1");
        deliver(order, 4, "k1");
        deliver(order, 3, "k1"); // a redelivery does not count
        assertThat(order.orderViolations()).isEqualTo(1);
        assertThat(order.keyOverlaps()).isZero();
        order.started(message(5, "k1"));
        order.started(message(6, "k1")); // k1 twice at once
        assertThat(order.keyOverlaps()).isEqualTo(1);
        order.started(message(7, "x"));
        assertThat(order.foreignKey()).contains("message 7");
    }

    private static void deliver(KeyOrder order, long id, String key) {
        order.started(message(id, key));
        order.finished(message(id, key));
    }

    private static dev.sluice.Message<byte[]> message(long id, String key) {
        return new dev.sluice.Message<>(id, new byte[0], key, null, java.util.Map.of(), 1, 0, java.time.Instant.EPOCH, 1);
    }
}
