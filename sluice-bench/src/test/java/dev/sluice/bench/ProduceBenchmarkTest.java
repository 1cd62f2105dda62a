package dev.sluice.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.embedded.EmbeddedPostgresServer;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The produce benchmark on a short window: its figures are sane and consistent, nothing is lost, the
 * JSON is what scripts expect, and nothing is left behind. No timing targets: this machine is shared.
 */
class ProduceBenchmarkTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static EmbeddedPostgresServer server;

    @BeforeAll
    static void start() {
        server = SharedServer.get(); // stopped at JVM exit, shared with the other scenario tests
    }

    private static ProduceBenchmark.Options shortRun() {
        return ProduceBenchmark.Options.defaults()
                .withDatabaseUrl(server.jdbcUrl())
                .withCallers(2)
                .withWarmup(Duration.ofMillis(300))
                .withDuration(Duration.ofSeconds(1));
    }

    @Test
    void measuresOursAndTheReferenceWithoutLosingMessages() throws Exception {
        List<ProduceBenchmark.RunResult> seen = new ArrayList<>();
        ProduceBenchmark.Result result = new ProduceBenchmark().run(shortRun(), new ProduceBenchmark.Listener() {
            @Override
            public void finished(ProduceBenchmark.RunResult run) {
                seen.add(run);
            }
        });

        assertThat(result.runs()).hasSize(1).isEqualTo(seen);
        ProduceBenchmark.RunResult run = result.runs().get(0);
        assertThat(run.ours()).isPositive();
        assertThat(run.reference()).isPositive();
        assertThat(run.ratio()).isCloseTo(run.ours() / run.reference(), org.assertj.core.data.Offset.offset(1e-9));
        assertThat(run.batchSize()).isGreaterThanOrEqualTo(1.0);
        // Two callers can never fill a batch of more than two.
        assertThat(run.batchSize()).isLessThanOrEqualTo(2.0);
        // The reference commits the same mean number of rows per transaction as ours did.
        assertThat(run.referenceBatchSize()).isCloseTo(run.batchSize(), org.assertj.core.data.Offset.offset(0.05));
        assertThat(run.referenceConnections()).isEqualTo(2);
        // No silent loss: every message a caller saw committed is in the log, and no more.
        assertThat(run.produced()).isPositive();
        assertThat(run.logRows()).isEqualTo(run.produced());
        assertThat(run.lost()).isZero();
        assertThat(run.duplicates()).isZero();
        assertThat(run.referenceRows()).isEqualTo(run.referenceCommitted());
        assertThat(run.oursMessages()).isPositive().isLessThanOrEqualTo(run.produced());
        assertThat(result.ours()).isEqualTo(run.ours());
        assertThat(result.ratio()).isEqualTo(run.ratio());
        assertThat(result.lost()).isZero();
        assertThat(result.environment().postgresVersion()).startsWith("17");
        assertThat(result.environment().cores()).isPositive();

        JsonNode summary = JSON.readTree(BenchJson.line(result.summary()));
        assertThat(BenchJson.line(result.summary())).doesNotContain("\n");
        for (String field : List.of("scenario", "ours", "reference", "ratio", "unit", "postgres_version", "cores",
                "duration_s", "batch_size", "callers", "idempotency_keys")) {
            assertThat(summary.has(field)).as("summary field %s", field).isTrue();
        }
        assertThat(summary.get("scenario").asText()).isEqualTo("produce");
        assertThat(summary.get("unit").asText()).isEqualTo("msgs/s");
        assertThat(summary.get("ours").asDouble()).isPositive();
        assertThat(summary.get("reference").asDouble()).isPositive();
        assertThat(summary.get("ratio").isNumber()).isTrue();
        assertThat(summary.get("cores").asInt()).isPositive();
        assertThat(summary.get("duration_s").asDouble()).isEqualTo(1.0);
        assertThat(summary.get("callers").asInt()).isEqualTo(2);
        assertThat(summary.get("idempotency_keys").asBoolean()).isFalse();
        assertThat(summary.get("batch_size").asDouble()).isGreaterThanOrEqualTo(1.0);

        JsonNode line = JSON.readTree(BenchJson.line(run.toJson(result.options())));
        assertThat(line.get("kind").asText()).isEqualTo("run");
        assertThat(line.get("lost").asLong()).isZero();

        assertNoBenchSchemaLeft();
    }

    @Test
    void idempotencyKeysOnEveryMessage() throws Exception {
        ProduceBenchmark.Result result = new ProduceBenchmark().run(shortRun().withIdempotencyKeys(true));

        ProduceBenchmark.RunResult run = result.runs().get(0);
        assertThat(run.ours()).isPositive();
        assertThat(run.reference()).isPositive();
        assertThat(run.batchSize()).isGreaterThanOrEqualTo(1.0);
        assertThat(run.duplicates()).isZero();
        assertThat(run.logRows()).isEqualTo(run.produced());
        assertThat(JSON.readTree(BenchJson.line(result.summary())).get("idempotency_keys").asBoolean()).isTrue();
        assertNoBenchSchemaLeft();
    }

    @Test
    void refusesNonsenseOptions() {
        assertThatThrownBy(() -> ProduceBenchmark.Options.defaults().withCallers(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("callers");
        assertThatThrownBy(() -> ProduceBenchmark.Options.defaults().withDuration(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("duration");
        assertThatThrownBy(() -> ProduceBenchmark.Options.defaults().withRuns(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("runs");
    }

    @Test
    void medianOfOddAndEvenCounts() {
        assertThat(BenchJson.median(List.of(3.0, 1.0, 2.0))).isEqualTo(2.0);
        assertThat(BenchJson.median(List.of(4.0, 1.0, 2.0, 3.0))).isEqualTo(2.5);
        assertThat(BenchJson.median(List.of())).isNaN();
    }

    private static void assertNoBenchSchemaLeft() throws Exception {
        try (Connection c = server.dataSource().getConnection();
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'bench\\_%'")) {
            rs.next();
            assertThat(rs.getLong(1)).as("benchmark schemas left behind").isZero();
        }
    }
}
