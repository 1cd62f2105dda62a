package dev.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code bench http} end to end on the test database, briefly: both sides measured, the ratios are the rates'
 * quotients, nothing lost. No targets asserted: this machine is shared.
 */
@SluiceTest
class BenchHttpCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void httpBesideTheLibrary(TestDatabase db) throws Exception {
        CliTest.Run r = CliTest.raw("bench", "http", "--messages", "2000", "--clients", "4", "--batch", "100",
                "--latencies", "20", "-o", "json", "--database-url", db.jdbcUrl());
        assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(Main.OK);
        List<JsonNode> lines = new ArrayList<>();
        for (String l : r.out().lines().toList()) {
            lines.add(JSON.readTree(l));
        }
        JsonNode summary = lines.get(lines.size() - 1);
        assertThat(summary.get("scenario").asText()).isEqualTo("http");
        assertThat(summary.get("lost").asLong()).isZero();
        double hp = summary.get("http_produce_per_s").asDouble();
        double lp = summary.get("library_produce_per_s").asDouble();
        assertThat(hp).isPositive();
        assertThat(lp).isPositive();
        assertThat(summary.get("produce_ratio").asDouble()).isCloseTo(hp / lp, org.assertj.core.data.Offset.offset(0.01));
        double hc = summary.get("http_consume_per_s").asDouble();
        double lc = summary.get("library_consume_per_s").asDouble();
        assertThat(summary.get("consume_ratio").asDouble()).isCloseTo(hc / lc, org.assertj.core.data.Offset.offset(0.01));
        assertThat(summary.has("added_p50_ms")).isTrue();
        assertThat(summary.has("added_p99_ms")).isTrue();
        assertThat(summary.get("target").asText()).isIn("pass", "fail");
    }

    @Test
    void badValuesAreRefusedBeforeAnythingConnects() {
        CliTest.Run r = CliTest.raw("bench", "http", "--clients", "0", "--database-url", "jdbc:postgresql://127.0.0.1:1/none");
        assertThat(r.exit()).isNotZero();
        assertThat(r.err()).contains("clients");
    }
}
