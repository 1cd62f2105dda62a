package dev.sluice.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.data.Offset.offset;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.embedded.EmbeddedPostgresServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * e2e and fanout on short windows: the figures are sane, every committed message reached every group,
 * and the JSON is what scripts expect. No timing targets: this machine is shared.
 */
class E2eBenchmarkTest {
    private static final List<String> FIELDS = List.of("produced_per_s", "consumed_per_s", "backlog_slope_per_s", "groups");
    private static EmbeddedPostgresServer server;

    @BeforeAll
    static void start() {
        server = SharedServer.get(); // stopped at JVM exit, shared with the other scenario tests
    }

    private static E2eBenchmark.Options shortRun(E2eBenchmark.Options base) {
        return base.withDatabaseUrl(server.jdbcUrl()).withCallers(2).withInFlight(2)
                .withWarmup(Duration.ofMillis(500)).withDuration(Duration.ofSeconds(2));
    }

    @Test
    void e2eConsumesEveryMessageAndMeasuresTheReference() throws Exception {
        List<Map<String, Object>> seen = new ArrayList<>();
        E2eBenchmark.Result result = new E2eBenchmark().run(shortRun(E2eBenchmark.Options.e2e()), new ScenarioListener() {
            @Override
            public void finished(Map<String, Object> line) {
                seen.add(line);
            }
        });

        assertThat(result.runs()).hasSize(1);
        assertThat(seen).hasSize(1);
        E2eBenchmark.RunResult run = result.runs().get(0);
        assertThat(run.producedPerSecond()).isPositive();
        assertThat(run.consumedPerSecond()).isPositive();
        assertThat(run.ours()).isPositive().isLessThanOrEqualTo(run.producedPerSecond());
        assertThat(run.referenceInsertPerSecond()).isPositive();
        assertThat(run.referenceReadPerSecond()).isPositive();
        assertThat(run.reference()).isPositive();
        assertThat(run.ratio()).isCloseTo(run.ours() / run.reference(), offset(1e-9));
        assertThat(run.backlogSlope()).isNotNaN();
        assertThat(run.batchSize()).isGreaterThanOrEqualTo(1.0);
        assertThat(run.referenceBatchSize()).isCloseTo(run.batchSize(), offset(0.05));
        // No loss: the group caught up and received every message a producer saw committed.
        assertThat(run.produced()).isPositive();
        assertThat(run.drained()).isTrue();
        assertThat(run.lost()).isZero();
        assertThat(run.referenceSkipped()).isNotNegative();

        JsonNode summary = BenchAssertions.summary(result, "e2e", FIELDS);
        assertThat(summary.get("groups").asInt()).isEqualTo(1);
        assertThat(summary.get("unit").asText()).isEqualTo("msgs/s");
        assertThat(summary.get("ours").asDouble()).isPositive();
        assertThat(summary.get("reference").asDouble()).isPositive();
        assertThat(summary.get("duration_s").asDouble()).isEqualTo(2.0);
        assertThat(summary.get("lost").asLong()).isZero();
        BenchAssertions.assertNoBenchSchemaLeft(server);
    }

    @Test
    void fanoutDeliversEveryMessageToEveryGroup() throws Exception {
        E2eBenchmark.Result result = new E2eBenchmark().run(shortRun(E2eBenchmark.Options.fanout()).withGroups(2));

        E2eBenchmark.RunResult run = result.runs().get(0);
        assertThat(run.ours()).isPositive();
        assertThat(run.reference()).isPositive();
        assertThat(run.consumedPerSecond()).isPositive();
        assertThat(run.drained()).isTrue();
        assertThat(run.lost()).isZero();
        JsonNode summary = BenchAssertions.summary(result, "fanout", FIELDS);
        assertThat(summary.get("groups").asInt()).isEqualTo(2);
        BenchAssertions.assertNoBenchSchemaLeft(server);
    }

    @Test
    void refusesNonsenseOptions() {
        assertThatThrownBy(() -> E2eBenchmark.Options.fanout().withGroups(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("groups");
        assertThatThrownBy(() -> E2eBenchmark.Options.e2e().withInFlight(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("in-flight");
        assertThatThrownBy(() -> E2eBenchmark.Options.e2e().withDuration(Duration.ofMillis(500)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("duration");
    }

    @Test
    void slopeAndRateFromSamples() {
        List<Sampler.Sample> samples = List.of(
                new Sampler.Sample(0, new long[] {0, 0}),
                new Sampler.Sample(500_000_000L, new long[] {100, 50}),
                new Sampler.Sample(1_000_000_000L, new long[] {200, 100}));
        assertThat(Sampler.rate(samples, 0)).isCloseTo(200.0, offset(1e-9));
        assertThat(Sampler.rate(samples, 1)).isCloseTo(100.0, offset(1e-9));
        // The backlog grows by 100 msgs/s.
        assertThat(Sampler.slope(samples, 0, 1)).isCloseTo(100.0, offset(1e-9));
    }
}
