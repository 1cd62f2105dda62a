package dev.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code sluice bench soak} end to end on its own temporary server, briefly (the benchmark's own test in
 * sluice-bench covers the pin): a JSON line per row as it is recorded, the summary last; the usage errors.
 */
class BenchSoakCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> SUMMARY_HEAD = List.of("scenario", "kind", "ours", "reference", "ratio", "unit",
            "postgres_version", "cores", "duration_s");

    @Test
    void jsonPrintsARowPerIntervalThenTheSummary() throws Exception {
        CliTest.Run r = CliTest.raw("bench", "soak", "--duration", "6s", "--rate", "50", "--retention", "2s",
                "--sample-every", "2s", "--payload-bytes", "32", "-o", "json");

        assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(Main.OK);
        List<String> lines = r.out().lines().toList();
        assertThat(lines).hasSize(4);
        for (int i = 0; i < 3; i++) {
            JsonNode row = JSON.readTree(lines.get(i));
            assertThat(row.get("kind").asText()).isEqualTo("run");
            assertThat(row.get("minute").asInt()).isEqualTo(i + 1);
            assertThat(row.get("bytes_total").asLong()).isPositive();
        }
        JsonNode summary = JSON.readTree(lines.get(3));
        List<String> names = new ArrayList<>();
        summary.fieldNames().forEachRemaining(names::add);
        assertThat(names.subList(0, SUMMARY_HEAD.size())).containsExactlyElementsOf(SUMMARY_HEAD);
        assertThat(summary.get("scenario").asText()).isEqualTo("soak");
        assertThat(summary.get("lost").asLong()).isZero();
        assertThat(summary.get("minutes")).hasSize(3);
        assertThat(summary.get("p99_ms_during_pin").isNull()).isTrue();
        assertThat(summary.get("rate_ratio_during_pin").isNull()).isTrue();
    }

    @Test
    void aPinNeedsBothFlagsAndMustEndInTime() {
        CliTest.Run half = CliTest.raw("bench", "soak", "--duration", "10s", "--pin-xmin-at", "2s");
        assertThat(half.exit()).isEqualTo(Main.USAGE);
        assertThat(half.err()).contains("--pin-xmin-at and --pin-xmin-for go together");
        CliTest.Run late = CliTest.raw("bench", "soak", "--duration", "10s", "--pin-xmin-at", "8s", "--pin-xmin-for", "5s");
        assertThat(late.exit()).isEqualTo(Main.FAILURE);
        assertThat(late.err()).contains("SLU-0015").contains("must end by the end of producing");
        CliTest.Run help = CliTest.raw("bench", "soak", "--help");
        assertThat(help.exit()).isZero();
        assertThat(help.out()).contains("--pin-xmin-at").contains("--retention").contains("growth");
    }
}
