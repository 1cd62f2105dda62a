package dev.sluice.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.embedded.EmbeddedPostgresServer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The idle benchmark on a short window: its own embedded server counts statements with
 * pg_stat_statements; a server without the library falls back to transactions and says so.
 */
class IdleBenchmarkTest {
    private static final List<String> FIELDS = List.of("groups", "stmts_per_s_per_group", "xids_per_s_per_group");

    @Test
    void countsStatementsWithPgStatStatementsOnItsOwnServer() throws Exception {
        IdleBenchmark.Result result = new IdleBenchmark().run(IdleBenchmark.Options.defaults().withGroups(3)
                .withWarmup(Duration.ofMillis(500)).withDuration(Duration.ofSeconds(2)));

        assertThat(result.statementSource()).isEqualTo("pg_stat_statements");
        assertThat(result.seconds()).isGreaterThanOrEqualTo(2.0);
        assertThat(result.statements()).isNotNegative();
        assertThat(result.xids()).isNotNegative();
        assertThat(result.autovacuumRuns()).isNotNegative();
        assertThat(result.statementWalRecords()).isNotNull().isNotNegative();
        assertThat(result.deliveries()).isZero();
        JsonNode summary = BenchAssertions.summary(result, "idle", FIELDS);
        assertThat(summary.get("groups").asInt()).isEqualTo(3);
        assertThat(summary.get("reference").isNull()).isTrue();
        assertThat(summary.get("ratio").isNull()).isTrue();
        assertThat(summary.get("stmts_per_s_per_group").asDouble())
                .isEqualTo(BenchJson.round(result.statements() / result.seconds() / 3, 4));
    }

    @Test
    void reportsTheThreadsAndHeapOfTheConsumingProcess() throws Exception {
        IdleBenchmark.Result result = new IdleBenchmark().run(IdleBenchmark.Options.defaults().withGroups(5)
                .withWarmup(Duration.ofMillis(500)).withDuration(Duration.ofSeconds(1)));

        assertThat(result.threadsBaseline()).isPositive();
        assertThat(result.threads()).isGreaterThanOrEqualTo(result.threadsBaseline());
        assertThat(result.heapBaselineBytes()).isPositive();
        assertThat(result.heapBytesPerGroup()).isNotNegative()
                .isEqualTo(Math.round((result.heapBytes() - result.heapBaselineBytes()) / 5.0));
        JsonNode summary = BenchAssertions.summary(result, "idle",
                List.of("threads", "threads_baseline", "heap_bytes_per_group"));
        JsonNode run = new com.fasterxml.jackson.databind.ObjectMapper().readTree(BenchJson.line(result.runLines().get(0)));
        for (JsonNode line : List.of(summary, run)) {
            assertThat(line.get("threads").isInt()).as("threads").isTrue();
            assertThat(line.get("threads").asInt()).isEqualTo(result.threads());
            assertThat(line.get("threads_baseline").asInt()).isEqualTo(result.threadsBaseline());
            assertThat(line.get("heap_bytes_per_group").isIntegralNumber()).isTrue();
            assertThat(line.get("heap_bytes_per_group").asLong()).isEqualTo(result.heapBytesPerGroup());
        }
    }

    @Test
    void fallsBackToTransactionsWithoutTheLibrary() throws Exception {
        try (EmbeddedPostgresServer plain = EmbeddedPostgresServer.startTemporary()) {
            IdleBenchmark.Result result = new IdleBenchmark().run(IdleBenchmark.Options.defaults()
                    .withDatabaseUrl(plain.jdbcUrl()).withGroups(2).withWarmup(Duration.ZERO)
                    .withDuration(Duration.ofSeconds(1)));

            assertThat(result.statementSource()).isEqualTo("pg_stat_database (transactions)");
            assertThat(result.statements()).isEqualTo(result.transactions()).isNotNegative();
            assertThat(result.statementWalRecords()).isNull();
            BenchAssertions.summary(result, "idle", FIELDS);
            BenchAssertions.assertNoBenchSchemaLeft(plain);
        }
    }
}
