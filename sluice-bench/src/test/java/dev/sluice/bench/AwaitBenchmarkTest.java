package dev.sluice.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.embedded.EmbeddedPostgresServer;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The await benchmark on a small load: every awaiter woken by its job's ack, the latencies computed from the ack's
 * return and the await's, the JSON fields, no schema left. No latency target: this machine is shared.
 */
class AwaitBenchmarkTest {
    private static EmbeddedPostgresServer server;

    @BeforeAll
    static void start() {
        server = SharedServer.get(); // stopped at JVM exit, shared with the other scenario tests
    }

    @Test
    void everyAwaiterIsWokenByItsAckAndTheLatenciesAreReported() throws Exception {
        int jobs = 50;
        AwaitBenchmark.Result result = new AwaitBenchmark().run(AwaitBenchmark.Options.defaults()
                .withDatabaseUrl(server.jdbcUrl()).withJobs(jobs).withWorkers(4));

        AwaitBenchmark.RunResult r = result.runs().get(0);
        assertThat(r.failed()).as(r.firstFailure()).isZero();
        assertThat(r.count()).isEqualTo(jobs);
        assertThat(r.negative()).isBetween(0L, (long) jobs);
        assertThat(r.p50Ms()).isNotNegative();
        assertThat(r.p99Ms()).isGreaterThanOrEqualTo(r.p50Ms());
        assertThat(r.maxMs()).isGreaterThanOrEqualTo(r.p99Ms());
        // No awaiter wakes before its ack was called: counted from the call's start, every latency is at least as long.
        assertThat(r.fromCallP50Ms()).isGreaterThanOrEqualTo(r.p50Ms());
        assertThat(r.fromCallP99Ms()).isGreaterThanOrEqualTo(r.p99Ms());
        assertThat(r.ackCallP50Ms()).isPositive();
        assertThat(r.registerSeconds()).isPositive();
        JsonNode summary = BenchAssertions.summary(result, "await",
                List.of("p50_ms", "p99_ms", "max_ms", "count", "negative", "target_p50", "acks_per_s"));
        assertThat(summary.get("count").asLong()).isEqualTo(jobs);
        assertThat(summary.get("awaiters").asInt()).isEqualTo(jobs);
        assertThat(summary.get("unit").asText()).isEqualTo("ms");
        assertThat(summary.get("ours").asDouble()).isEqualTo(summary.get("p50_ms").asDouble());
        assertThat(summary.get("target_p50").asText()).isEqualTo(r.p50Ms() <= AwaitBenchmark.TARGET_P50_MS ? "pass" : "fail");
        BenchAssertions.assertNoBenchSchemaLeft(server);
    }

    @Test
    void latenciesAreWakeMinusAckReturnWithNegativesCountedAsZero() {
        // Job 0: acked at 1.0 ms, woken at 3.0 ms; job 1: woken 0.5 ms before its handler noted the ack; job 2: 10 ms.
        AtomicLongArray called = new AtomicLongArray(new long[] {0, 1_000_000, 2_000_000});
        AtomicLongArray acked = new AtomicLongArray(new long[] {1_000_000, 3_000_000, 4_000_000});
        AtomicLongArray woke = new AtomicLongArray(new long[] {3_000_000, 2_500_000, 14_000_000});
        AwaitBenchmark.RunResult r = AwaitBenchmark.result(1, called, acked, woke, 0.5, 0, null);
        assertThat(r.count()).isEqualTo(3);
        assertThat(r.negative()).isEqualTo(1);
        assertThat(r.p50Ms()).isEqualTo(2.0);
        assertThat(r.maxMs()).isEqualTo(10.0);
        assertThat(r.p99Ms()).isEqualTo(10.0);
        assertThat(r.fromCallP50Ms()).isEqualTo(3.0);
        assertThat(r.ackCallP50Ms()).isEqualTo(2.0);
        assertThat(r.ackSeconds()).isEqualTo(0.003);
    }

    @Test
    void optionsAreChecked() {
        assertThatThrownBy(() -> AwaitBenchmark.Options.defaults().withJobs(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> AwaitBenchmark.Options.defaults().withJobs(10_001))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> AwaitBenchmark.Options.defaults().withWorkers(0)).isInstanceOf(IllegalArgumentException.class);
        assertThat(AwaitBenchmark.Options.defaults().jobs()).isEqualTo(1000);
        assertThat(AwaitBenchmark.Options.defaults().workers()).isEqualTo(8);
    }
}
