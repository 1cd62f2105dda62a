package dev.sluice.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.embedded.EmbeddedPostgresServer;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;

/** Checks the scenario tests share: the JSON lines scripts read, and nothing left behind. */
final class BenchAssertions {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The summary fields every scenario prints (docs/benchmarks.md, "JSON output"). */
    static final List<String> COMMON = List.of("scenario", "ours", "reference", "ratio", "unit", "postgres_version",
            "cores", "duration_s");

    private BenchAssertions() {
    }

    /** The summary as scripts see it: one line of JSON holding the common fields and {@code extra}. */
    static JsonNode summary(ScenarioResult result, String scenario, List<String> extra) throws Exception {
        String line = BenchJson.line(result.summary());
        assertThat(line).doesNotContain("\n");
        JsonNode summary = JSON.readTree(line);
        for (String field : COMMON) {
            assertThat(summary.has(field)).as("summary field %s", field).isTrue();
        }
        for (String field : extra) {
            assertThat(summary.has(field)).as("summary field %s", field).isTrue();
        }
        assertThat(summary.get("scenario").asText()).isEqualTo(scenario);
        assertThat(summary.get("kind").asText()).isEqualTo("summary");
        assertThat(summary.get("cores").asInt()).isPositive();
        assertThat(summary.get("postgres_version").asText()).startsWith("17");
        for (var run : result.runLines()) {
            JsonNode r = JSON.readTree(BenchJson.line(run));
            assertThat(r.get("kind").asText()).isEqualTo("run");
            assertThat(r.get("scenario").asText()).isEqualTo(scenario);
        }
        assertThat(result.problems()).isEmpty();
        return summary;
    }

    static void assertNoBenchSchemaLeft(EmbeddedPostgresServer server) throws Exception {
        try (Connection c = server.dataSource().getConnection();
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'bench\\_%'")) {
            rs.next();
            assertThat(rs.getLong(1)).as("benchmark schemas left behind").isZero();
        }
    }
}
