package dev.sluice.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.embedded.EmbeddedPostgresServer;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The backlog benchmark on a small backlog: every measurement delivered the working set, JSON fields present. */
class BacklogBenchmarkTest {
    private static EmbeddedPostgresServer server;

    @BeforeAll
    static void start() {
        server = SharedServer.get(); // stopped at JVM exit, shared with the other scenario tests
    }

    @Test
    void claimsTheWorkingSetOnBothStreams() throws Exception {
        BacklogBenchmark.Result result = new BacklogBenchmark().run(BacklogBenchmark.Options.defaults()
                .withDatabaseUrl(server.jdbcUrl()).withSize(5_000).withMessages(200).withBatch(100).withRepeats(2));

        assertThat(result.backlogMs()).hasSize(2).allSatisfy(v -> assertThat(v).isPositive());
        assertThat(result.emptyMs()).hasSize(2).allSatisfy(v -> assertThat(v).isPositive());
        assertThat(result.historyMs()).hasSize(2).allSatisfy(v -> assertThat(v).isPositive());
        assertThat(result.lost()).isZero();
        assertThat(result.ratio()).isEqualTo(result.backlogClaimMs() / result.emptyClaimMs());
        JsonNode summary = BenchAssertions.summary(result, "backlog",
                List.of("empty_claim_ms", "backlog_claim_ms", "backlog_size"));
        assertThat(summary.get("backlog_size").asLong()).isEqualTo(5_000);
        assertThat(summary.get("unit").asText()).isEqualTo("ms");
        BenchAssertions.assertNoBenchSchemaLeft(server);
    }

    @Test
    void refusesAWorkingSetLargerThanTheBacklog() {
        assertThatThrownBy(() -> BacklogBenchmark.Options.defaults().withSize(100).withMessages(200))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("messages");
    }
}
