package dev.sluice.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.embedded.EmbeddedPostgresServer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The queue benchmark on a small load: every job handled once on both sides, the JSON fields, no schema left. */
class QueueBenchmarkTest {
    private static EmbeddedPostgresServer server;

    @BeforeAll
    static void start() {
        server = SharedServer.get(); // stopped at JVM exit, shared with the other scenario tests
    }

    @Test
    void measuresEnqueueDrainAndPickupBesideTheReferences() throws Exception {
        QueueBenchmark.Result result = new QueueBenchmark().run(QueueBenchmark.Options.defaults()
                .withDatabaseUrl(server.jdbcUrl()).withJobs(3000).withEnqueueBatch(200).withBatch(100)
                .withPickup(10, 100).withRuns(2));

        assertThat(result.runs()).hasSize(2);
        for (QueueBenchmark.RunResult r : result.runs()) {
            assertThat(r.missing()).isZero();
            assertThat(r.pickupMissing()).isZero();
            assertThat(r.enqueuePerSecond()).isPositive();
            assertThat(r.rawInsertPerSecond()).isPositive();
            assertThat(r.drainPerSecond()).isPositive();
            assertThat(r.rawSkipLockedPerSecond()).isPositive();
            assertThat(r.pickupP95Ms()).isGreaterThanOrEqualTo(r.pickupP50Ms()).isNotNegative();
        }
        JsonNode summary = BenchAssertions.summary(result, "queue",
                List.of("enqueue_per_s", "drain_per_s", "raw_skip_locked_per_s", "enqueue_ratio", "pickup_p50_ms",
                        "pickup_p95_ms"));
        assertThat(summary.get("unit").asText()).isEqualTo("jobs/s");
        assertThat(summary.get("reference_name").asText()).isEqualTo("raw-skip-locked");
        assertThat(summary.get("ours").asDouble()).isEqualTo(summary.get("drain_per_s").asDouble());
        assertThat(summary.get("reference").asDouble()).isEqualTo(summary.get("raw_skip_locked_per_s").asDouble());
        assertThat(summary.has("keep_runs_ratio")).as("no keep-runs drain without keepRuns").isFalse();
        assertThat(result.runs()).allSatisfy(r -> assertThat(r.keepRuns()).isNull());
        BenchAssertions.assertNoBenchSchemaLeft(server);
    }

    @Test
    void keepRunsDrainsASecondQueueWithRunRecordsBesideThePlainDrain() throws Exception {
        int jobs = 400;
        QueueBenchmark.Result result = new QueueBenchmark().run(QueueBenchmark.Options.defaults()
                .withDatabaseUrl(server.jdbcUrl()).withJobs(jobs).withEnqueueBatch(100).withBatch(50).withPickup(0, 1)
                .withKeepRuns(Duration.ofDays(1)));

        QueueBenchmark.RunResult r = result.runs().get(0);
        assertThat(r.missing()).isZero();
        assertThat(r.drainPerSecond()).isPositive();
        QueueBenchmark.KeepRuns kept = r.keepRuns();
        assertThat(kept).isNotNull();
        assertThat(kept.missing()).isZero();
        assertThat(kept.drainPerSecond()).isPositive();
        assertThat(kept.enqueuePerSecond()).isPositive();
        // Every job of that queue left its record, and its trail: enqueued, claimed, succeeded.
        assertThat(kept.records()).isEqualTo(jobs);
        assertThat(kept.events()).isEqualTo(3L * jobs);
        assertThat(r.keepRunsRatio()).isEqualTo(kept.drainPerSecond() / r.drainPerSecond());
        JsonNode summary = BenchAssertions.summary(result, "queue",
                List.of("drain_per_s", "keep_runs_drain_per_s", "keep_runs_ratio", "target_keep_runs", "keep_runs_s"));
        assertThat(summary.get("keep_runs_ratio").asDouble()).isPositive()
                .isCloseTo(r.keepRunsRatio(), org.assertj.core.data.Offset.offset(0.0005));
        assertThat(summary.get("keep_runs_drain_per_s").asDouble()).isPositive();
        assertThat(summary.get("drain_per_s").asDouble()).isPositive();
        assertThat(summary.get("target_keep_runs").asText())
                .isEqualTo(r.keepRunsRatio() >= QueueBenchmark.KEEP_RUNS_TARGET ? "pass" : "fail");
        assertThat(summary.get("keep_runs_s").asDouble()).isEqualTo(86_400.0);
        assertThat(summary.get("keep_runs_records").asLong()).isEqualTo(jobs);
        BenchAssertions.assertNoBenchSchemaLeft(server);
    }

    @Test
    void optionsAreChecked() {
        assertThatThrownBy(() -> QueueBenchmark.Options.defaults().withKeepRuns(Duration.ofMillis(500)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> QueueBenchmark.Options.defaults().withKeepRuns(Duration.ofDays(3651)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(QueueBenchmark.Options.defaults().keepRuns()).isNull();
        assertThatThrownBy(() -> QueueBenchmark.Options.defaults().withJobs(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> QueueBenchmark.Options.defaults().withBatch(1001))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(QueueBenchmark.Options.defaults().jobs()).isEqualTo(100_000);
        assertThat(QueueBenchmark.Options.defaults().workers()).isEqualTo(8);
    }
}
