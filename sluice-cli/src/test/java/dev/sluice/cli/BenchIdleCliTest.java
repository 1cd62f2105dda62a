package dev.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code sluice bench idle} end to end on its own temporary server, briefly: the JSON lines (the run
 * line, then the summary last, with the common fields first) and the text output, both with the
 * client's footprint ({@code threads}, {@code threads_baseline}, {@code heap_bytes_per_group}).
 */
class BenchIdleCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> SUMMARY_HEAD = List.of("scenario", "kind", "ours", "reference", "ratio", "unit",
            "postgres_version", "cores", "duration_s");
    private static final List<String> FOOTPRINT = List.of("threads", "threads_baseline", "heap_bytes_per_group");

    @Test
    void jsonPrintsTheRunLineThenTheSummaryWithThreadsAndHeapPerGroup() throws Exception {
        CliTest.Run r = CliTest.raw("bench", "idle", "--groups", "3", "--duration", "1s", "--warmup", "0s", "-o", "json");

        assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(Main.OK);
        List<String> lines = r.out().lines().toList();
        assertThat(lines).hasSize(2);
        JsonNode run = JSON.readTree(lines.get(0));
        JsonNode summary = JSON.readTree(lines.get(1));
        assertThat(run.get("kind").asText()).isEqualTo("run");
        assertThat(run.get("scenario").asText()).isEqualTo("idle");
        assertThat(run.get("run").asInt()).isEqualTo(1);
        assertThat(summary.get("kind").asText()).isEqualTo("summary");
        List<String> names = new ArrayList<>();
        summary.fieldNames().forEachRemaining(names::add);
        assertThat(names.subList(0, SUMMARY_HEAD.size())).containsExactlyElementsOf(SUMMARY_HEAD);
        assertThat(summary.get("groups").asInt()).isEqualTo(3);
        for (JsonNode line : List.of(run, summary)) {
            for (String field : FOOTPRINT) {
                assertThat(line.get(field)).as(field).isNotNull();
                assertThat(line.get(field).isIntegralNumber()).as(field).isTrue();
            }
            assertThat(line.get("threads").asInt()).isGreaterThanOrEqualTo(line.get("threads_baseline").asInt());
            assertThat(line.get("threads_baseline").asInt()).isPositive();
            assertThat(line.get("heap_bytes_per_group").asLong()).isNotNegative();
        }
        assertThat(run.get("threads")).isEqualTo(summary.get("threads"));
        assertThat(run.get("heap_bytes_per_group")).isEqualTo(summary.get("heap_bytes_per_group"));
    }

    @Test
    void textPrintsTheHeaderTheRunAndTheSummaryWithTheFootprint() {
        CliTest.Run r = CliTest.raw("bench", "idle", "--groups", "2", "--duration", "1s", "--warmup", "0s");

        assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(Main.OK);
        assertThat(r.err()).contains("starting a temporary embedded PostgreSQL...").contains("run 1: starting 2 consumers...")
                .contains("run 1: idle window...");
        List<String> lines = r.out().lines().toList();
        assertThat(lines.get(0)).matches("scenario: +idle");
        assertThat(lines.get(1)).matches("postgres: +17.* \\(embedded, temporary\\)");
        assertThat(lines.get(2)).matches("cores: +\\d+");
        assertThat(lines.get(3)).matches("groups: +2");
        assertThat(lines.get(4)).matches("duration: +1s after 0s warm-up");
        assertThat(lines.get(5)).matches("run 1: statements=\\d+ transactions=\\d+ xids=\\d+ autovacuum_runs=\\d+"
                + " statement_wal_records=\\d+ window_s=\\S+ threads=\\d+ threads_baseline=\\d+ heap_bytes_per_group=-?\\d+");
        List<String> summary = lines.subList(6, lines.size());
        List<String> keys = summary.stream().map(l -> l.substring(0, l.indexOf(':'))).toList();
        assertThat(keys).containsExactly("groups", "stmts_per_s_per_group", "xids_per_s_per_group",
                "xacts_per_s_per_group", "statement_source", "autovacuum_runs", "statement_wal_records", "threads",
                "threads_baseline", "heap_bytes_per_group");
        assertThat(summary.get(0)).matches("groups: +2");
        assertThat(summary.get(4)).matches("statement_source: +pg_stat_statements");
        assertThat(Pattern.compile("threads: +\\d+").matcher(r.out()).find()).isTrue();
    }
}
