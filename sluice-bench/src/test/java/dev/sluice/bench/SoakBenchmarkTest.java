package dev.sluice.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.embedded.EmbeddedPostgresServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A short soak (20 s at 100 msgs/s, retention 5 s, a row every 5 s, a 5 s snapshot pin): nothing lost, the
 * rows recorded and reported as they come, the summary's fields present with their types. Whether storage
 * stays bounded is the benchmark's target on a real run (docs/benchmarks.md), not this test's.
 */
class SoakBenchmarkTest {
    private static EmbeddedPostgresServer server;

    @BeforeAll
    static void start() {
        server = SharedServer.get(); // stopped at JVM exit, shared with the other scenario tests
    }

    @Test
    void aShortPinnedSoakLosesNothingAndReportsEveryField() throws Exception {
        List<Map<String, Object>> reported = new ArrayList<>();
        List<String> phases = new ArrayList<>();
        SoakBenchmark.Options o = SoakBenchmark.Options.defaults().withDatabaseUrl(server.jdbcUrl()).withRate(100)
                .withDuration(Duration.ofSeconds(20)).withRetention(Duration.ofSeconds(5))
                .withSampleEvery(Duration.ofSeconds(5)).withPayloadBytes(64)
                .withPin(Duration.ofSeconds(7), Duration.ofSeconds(5)).withPinWindow(Duration.ofSeconds(3));
        SoakBenchmark.Result r = new SoakBenchmark().run(o, new ScenarioListener() {
            @Override
            public void finished(Map<String, Object> line) {
                reported.add(line);
            }

            @Override
            public void phase(int run, String what) {
                phases.add(what);
            }
        });

        assertThat(r.lost()).isZero();
        assertThat(r.produceFailures()).isZero();
        assertThat(r.produced()).isBetween(1_800L, 2_000L);
        assertThat(r.delivered()).isEqualTo(r.produced());
        assertThat(o.partitionSize()).as("at least 100 ids per partition").isEqualTo(125);
        assertThat(r.rows()).hasSize(4);
        assertThat(reported).as("each row reported as it was recorded").isEqualTo(r.runLines());
        assertThat(phases).anyMatch(p -> p.startsWith("vacuum horizon pinned at xmin ")).contains("pin released");
        assertThat(r.rows().stream().map(SoakBenchmark.Row::pinned).toList())
                .as("the intervals 5-10 s and 10-15 s overlap the pin (7 s to 12 s)").containsExactly(false, true, true, false);
        for (SoakBenchmark.Row row : r.rows()) {
            assertThat(row.streamBytes()).isPositive();
            assertThat(row.controlPlaneBytes()).isPositive();
            assertThat(row.partitions()).isPositive();
            assertThat(row.deadTuples()).containsKeys("message_log_" + r.streamId(), "consumer_group_cursor_" + r.streamId(),
                    "claim_lease_" + r.streamId(), "idempotency_key_" + r.streamId(), "control_plane");
        }

        JsonNode s = BenchAssertions.summary(r, "soak", List.of("lost", "delivered_per_s", "bytes_steady", "bytes_end",
                "growth", "p99_ms_before_pin", "p99_ms_during_pin", "p99_ms_after_pin", "rate_ratio_during_pin", "minutes"));
        assertThat(s.get("lost").asLong()).isZero();
        assertThat(s.get("delivered_per_s").asDouble()).isBetween(80.0, 110.0);
        assertThat(s.get("bytes_steady").isIntegralNumber()).isTrue();
        assertThat(s.get("bytes_end").asLong()).isEqualTo(r.rows().get(3).totalBytes());
        assertThat(s.get("growth").asDouble()).isEqualTo(BenchJson.round(s.get("bytes_end").asDouble()
                / s.get("bytes_steady").asDouble(), 3));
        for (String f : List.of("p99_ms_before_pin", "p99_ms_during_pin", "p99_ms_after_pin", "rate_ratio_during_pin")) {
            assertThat(s.get(f).isNumber()).as(f).isTrue();
        }
        assertThat(s.get("pin_held").asBoolean()).isTrue();
        assertThat(s.get("minutes")).hasSize(4);
        assertThat(s.get("minutes").get(0).get("bytes_total").asLong()).isEqualTo(r.rows().get(0).totalBytes());
        BenchAssertions.assertNoBenchSchemaLeft(server);
    }

    @Test
    void withoutAPinThePinFieldsAreNullAndBadOptionsAreRefused() {
        SoakBenchmark.Options plain = SoakBenchmark.Options.defaults();
        SoakBenchmark.Result r = new SoakBenchmark.Result(plain, new ProduceBenchmark.Environment("17.6", 2, true, "b"), 1,
                List.of(), 600, 0, 0, 0, 0, 0, 0, 0, Double.NaN, Double.NaN, null, null);
        Map<String, Object> s = r.summary();
        for (String f : List.of("p99_ms_before_pin", "p99_ms_during_pin", "p99_ms_after_pin", "rate_ratio_during_pin",
                "bytes_steady", "bytes_end", "growth")) {
            assertThat(s).containsEntry(f, null);
        }
        assertThat(plain.partitionSize()).as("2000/s x 60 s / 4").isEqualTo(30_000);
        assertThatThrownBy(() -> plain.withPin(Duration.ofMinutes(9), Duration.ofMinutes(2)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must end by the end of producing");
        assertThatThrownBy(() -> new SoakBenchmark.Options(null, 10, Duration.ofMinutes(1), Duration.ofSeconds(5), 64,
                Duration.ofSeconds(5), Duration.ofSeconds(1), null, Duration.ofSeconds(60)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("go together");
        assertThatThrownBy(() -> plain.withPayloadBytes(4)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theHistogramIsWithinItsBucketWidth() {
        LatencyHistogram h = new LatencyHistogram();
        for (long v = 1; v <= 100_000; v++) {
            h.record(v * 10); // 10 µs .. 1 s
        }
        assertThat(h.count()).isEqualTo(100_000);
        assertThat(h.quantileMs(0.50)).isCloseTo(500.0, org.assertj.core.data.Percentage.withPercentage(1.6));
        assertThat(h.quantileMs(0.99)).isCloseTo(990.0, org.assertj.core.data.Percentage.withPercentage(1.6));
        assertThat(new LatencyHistogram().quantileMs(0.5)).isNaN();
        for (long v : new long[] {0, 1, 127, 128, 129, 255, 256, 1_000_000, 1L << 40}) {
            int i = LatencyHistogram.index(v);
            assertThat(v).isBetween(LatencyHistogram.lower(i), LatencyHistogram.upper(i));
        }
    }
}
