package dev.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.ErrorCode;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code bench queue --keep-runs} and {@code bench await} end to end on the test database, briefly: the JSON lines
 * (run lines, the summary last) with the fields of job runs, the text output, and bad values refused as coded errors
 * before anything connects. No targets asserted: this machine is shared.
 */
@SluiceTest
class BenchRunsCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Nothing listens there: a benchmark that got past its options would fail to connect, not validate. */
    private static final String NOWHERE = "jdbc:postgresql://127.0.0.1:1/none";

    private static List<JsonNode> lines(CliTest.Run r) throws Exception {
        List<JsonNode> out = new java.util.ArrayList<>();
        for (String l : r.out().lines().toList()) {
            out.add(JSON.readTree(l));
        }
        return out;
    }

    @Test
    void queueWithKeepRunsReportsBothDrainsAndTheirRatio(TestDatabase db) throws Exception {
        CliTest.Run r = CliTest.raw("bench", "queue", "--jobs", "300", "--enqueue-batch", "100", "--batch", "50",
                "--pickup-jobs", "0", "--keep-runs", "1d", "-o", "json", "--database-url", db.jdbcUrl());

        assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(Main.OK);
        List<JsonNode> lines = lines(r);
        assertThat(lines).hasSize(2);
        JsonNode run = lines.get(0);
        JsonNode summary = lines.get(1);
        assertThat(run.get("kind").asText()).isEqualTo("run");
        assertThat(summary.get("kind").asText()).isEqualTo("summary");
        assertThat(summary.get("scenario").asText()).isEqualTo("queue");
        double plain = summary.get("drain_per_s").asDouble();
        double kept = summary.get("keep_runs_drain_per_s").asDouble();
        assertThat(plain).isPositive();
        assertThat(kept).isPositive();
        assertThat(summary.get("keep_runs_ratio").asDouble()).isPositive()
                .isCloseTo(kept / plain, org.assertj.core.data.Offset.offset(0.01));
        assertThat(summary.get("target_keep_runs").asText()).isIn("pass", "fail");
        assertThat(summary.get("keep_runs_records").asLong()).isEqualTo(300);
        assertThat(summary.get("missing").asLong()).isZero();
        assertThat(run.get("keep_runs_events").asLong()).isEqualTo(900);
    }

    @Test
    void queueWithoutKeepRunsPrintsNoKeepRunsField(TestDatabase db) {
        CliTest.Run r = CliTest.raw("bench", "queue", "--jobs", "200", "--enqueue-batch", "100", "--batch", "50",
                "--pickup-jobs", "0", "--database-url", db.jdbcUrl());

        assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(Main.OK);
        assertThat(r.out()).contains("drain_per_s:").doesNotContain("keep_runs").doesNotContain("keep runs");
        assertThat(r.err()).doesNotContain("keepRuns");
    }

    @Test
    void awaitReportsOneLatencyPerJob(TestDatabase db) throws Exception {
        CliTest.Run r = CliTest.raw("bench", "await", "--jobs", "50", "--workers", "4", "-o", "json", "--database-url",
                db.jdbcUrl());

        assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(Main.OK);
        List<JsonNode> lines = lines(r);
        assertThat(lines).hasSize(2);
        JsonNode summary = lines.get(1);
        assertThat(summary.get("scenario").asText()).isEqualTo("await");
        assertThat(summary.get("count").asLong()).isEqualTo(50);
        assertThat(summary.get("failed").asLong()).isZero();
        assertThat(summary.get("p50_ms").isNumber()).isTrue();
        assertThat(summary.get("p99_ms").asDouble()).isGreaterThanOrEqualTo(summary.get("p50_ms").asDouble());
        assertThat(summary.get("max_ms").asDouble()).isGreaterThanOrEqualTo(summary.get("p99_ms").asDouble());
        assertThat(summary.get("target_p50").asText()).isIn("pass", "fail");
        assertThat(lines.get(0).get("count").asLong()).isEqualTo(50);
    }

    @Test
    void awaitTextNamesTheSettingsAndTheTarget(TestDatabase db) {
        CliTest.Run r = CliTest.raw("bench", "await", "--jobs", "20", "--workers", "2", "--database-url", db.jdbcUrl());

        assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(Main.OK);
        assertThat(r.err()).contains("run 1: 20 awaiters...").contains("run 1: acks...");
        assertThat(r.out()).containsPattern("awaiters: +20 platform threads, one job each")
                .containsPattern("run 1: p50_ms=\\S+ p99_ms=\\S+ max_ms=\\S+ count=20 ")
                .containsPattern("target_p50: +(pass|fail)").containsPattern("count: +20");
    }

    @Test
    void badValuesAreCodedErrorsBeforeAnythingConnects() {
        String code = "[" + ErrorCode.INVALID_ARGUMENT.code() + "]";
        for (String[] bad : new String[][] {{"queue", "--keep-runs", "500ms"}, {"queue", "--keep-runs", "soon"},
                {"queue", "--keep-runs", "3651d"}, {"await", "--jobs", "0"}, {"await", "--jobs", "10001"},
                {"await", "--workers", "0"}}) {
            CliTest.Run r = CliTest.raw("bench", bad[0], bad[1], bad[2], "--database-url", NOWHERE);
            assertThat(r.exit()).as(String.join(" ", bad) + ": " + r.err()).isEqualTo(Main.FAILURE);
            assertThat(r.err()).contains(code).doesNotContain("\tat ").doesNotContain("Exception");
        }
        assertThat(CliTest.raw("bench", "queue", "-h").out()).contains("--keep-runs=DURATION");
        assertThat(CliTest.raw("bench", "await", "-h").out()).contains("--jobs=N").contains("--workers=C");
        assertThat(CliTest.raw("bench", "await", "--jobs", "x").exit()).isEqualTo(Main.USAGE);
    }
}
