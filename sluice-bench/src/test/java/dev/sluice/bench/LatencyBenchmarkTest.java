package dev.sluice.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.embedded.EmbeddedPostgresServer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The latency benchmark on a short window: both modes measured, nothing lost, JSON fields present. */
class LatencyBenchmarkTest {
    private static EmbeddedPostgresServer server;

    @BeforeAll
    static void start() {
        server = EmbeddedPostgresServer.startTemporary();
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void measuresBothModesWithoutLosingMessages() throws Exception {
        LatencyBenchmark.Result result = new LatencyBenchmark().run(LatencyBenchmark.Options.defaults()
                .withDatabaseUrl(server.jdbcUrl()).withRate(50).withWarmup(Duration.ofMillis(200))
                .withDuration(Duration.ofSeconds(1)).withPollInterval(Duration.ofMillis(200)));

        LatencyBenchmark.RunResult run = result.runs().get(0);
        for (LatencyBenchmark.Latencies l : List.of(run.wakeups(), run.pollOnly())) {
            assertThat(l.messages()).isPositive();
            assertThat(l.lost()).isZero();
            assertThat(l.p50Ms()).isNotNegative();
            assertThat(l.p95Ms()).isGreaterThanOrEqualTo(l.p50Ms());
            assertThat(l.p99Ms()).isGreaterThanOrEqualTo(l.p95Ms());
            assertThat(l.maxMs()).isGreaterThanOrEqualTo(l.p99Ms());
        }
        assertThat(run.pollOnly().p50Ms()).isPositive();

        JsonNode summary = BenchAssertions.summary(result, "latency",
                List.of("p50_ms", "p95_ms", "p99_ms", "poll_only_p50_ms"));
        assertThat(summary.get("unit").asText()).isEqualTo("ms");
        assertThat(summary.get("ratio").asDouble())
                .isEqualTo(BenchJson.round(run.wakeups().p50Ms() / run.pollOnly().p50Ms(), 4));
        BenchAssertions.assertNoBenchSchemaLeft(server);
    }

    @Test
    void nearestRankQuantiles() {
        double[] v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
        assertThat(Bench.quantile(v, 0.5)).isEqualTo(5);
        assertThat(Bench.quantile(v, 0.95)).isEqualTo(10);
        assertThat(Bench.quantile(v, 0.0)).isEqualTo(1);
        assertThat(Bench.quantile(new double[0], 0.5)).isNaN();
    }
}
