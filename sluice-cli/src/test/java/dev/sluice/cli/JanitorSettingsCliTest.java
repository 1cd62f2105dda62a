package dev.sluice.cli;

import static dev.sluice.cli.CliTest.raw;
import static dev.sluice.cli.CliTest.run;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import org.junit.jupiter.api.Test;

/** The settings the janitor enforces: taken by {@code stream register} and {@code consumer register}, shown by get. */
@SluiceTest
class JanitorSettingsCliTest {

    @Test
    void streamRegisterTakesTheRetentionsAndGetShowsThem(TestDatabase db) {
        String schema = db.freshSchemaName("cli_janitor_stream");
        CliTest.Run reg = run(db, schema, "stream", "register", "kept", "--retention", "7d", "--delivery-log-retention", "3d",
                "--empty-compaction-head-ttl", "2h");
        assertThat(reg.exit()).as(reg.err()).isZero();
        assertThat(run(db, schema, "stream", "register", "plain").exit()).isZero();

        CliTest.Run kept = run(db, schema, "stream", "get", "kept");
        assertThat(kept.exit()).as(kept.err()).isZero();
        assertThat(line(kept.out(), "retention:")).isEqualTo("retention:                  7d");
        assertThat(line(kept.out(), "delivery_log_retention:")).endsWith(" 3d");
        assertThat(line(kept.out(), "empty_compaction_head_ttl:")).endsWith(" 2h");
        assertThat(line(kept.out(), "idempotency_key_ttl:")).endsWith(" 1d");
        assertThat(kept.out()).doesNotContain("not enforced").doesNotContain("not swept");
        assertThat(line(run(db, schema, "stream", "get", "plain").out(), "delivery_log_retention:")).endsWith(" 7d");
        assertThat(run(db, schema, "stream", "list").out()).contains("7d").doesNotContain("not enforced");

        JsonNode json = run(db, schema, "stream", "get", "kept", "-o", "json").json();
        assertThat(json.at("/config/retention").asText()).isEqualTo("PT168H");
        assertThat(json.at("/config/delivery_log_retention").asText()).isEqualTo("PT72H");
        assertThat(json.has("not_enforced_yet")).isFalse();

        CliTest.Run zero = run(db, schema, "stream", "register", "kept", "--delivery-log-retention", "0s");
        assertThat(zero.exit()).isEqualTo(Main.FAILURE);
        assertThat(zero.err()).contains("SLU-0003").contains("deliveryLogRetention");
        CliTest.Run negative = run(db, schema, "stream", "register", "kept", "--delivery-log-retention", "-1d");
        assertThat(negative.exit()).isEqualTo(Main.FAILURE);
        assertThat(negative.err()).contains("SLU-0015");
        assertThat(line(run(db, schema, "stream", "get", "kept").out(), "delivery_log_retention:")).as("nothing changed")
                .endsWith(" 3d");

        CliTest.Run help = raw("stream", "register", "--help");
        assertThat((help.out() + help.err()).replaceAll("\\s+", " ")).contains("--delivery-log-retention=DURATION")
                .contains("--retention=DURATION Keep messages this long (e.g. 7d); default: forever. The elected manager's janitor");
    }

    @Test
    void consumerRegisterTakesTheDeadLetterRetentionAndGetShowsIt(TestDatabase db) {
        String schema = db.freshSchemaName("cli_janitor_group");
        assertThat(run(db, schema, "stream", "register", "s").exit()).isZero();
        CliTest.Run reg = run(db, schema, "consumer", "register", "s", "short", "--dead-letter-retention", "36h", "-o", "json");
        assertThat(reg.exit()).as(reg.err()).isZero();
        assertThat(reg.json().get("dead_letter_retention").asText()).isEqualTo("PT36H");
        assertThat(run(db, schema, "consumer", "register", "s", "plain").exit()).isZero();

        CliTest.Run got = run(db, schema, "consumer", "get", "s", "short");
        assertThat(got.exit()).as(got.err()).isZero();
        assertThat(line(got.out(), "dead_letter_retention:")).contains(" 36h");
        assertThat(line(run(db, schema, "consumer", "get", "s", "plain").out(), "dead_letter_retention:")).contains(" 14d");
        assertThat(run(db, schema, "consumer", "list", "s", "-o", "json").json().get(1).get("dead_letter_retention").asText())
                .isEqualTo("PT36H");

        CliTest.Run zero = run(db, schema, "consumer", "register", "s", "short", "--dead-letter-retention", "0s");
        assertThat(zero.exit()).isEqualTo(Main.FAILURE);
        assertThat(zero.err()).contains("SLU-0003").contains("deadLetterRetention");
        CliTest.Run bad = run(db, schema, "consumer", "register", "s", "short", "--dead-letter-retention", "soon");
        assertThat(bad.exit()).isEqualTo(Main.FAILURE);
        assertThat(bad.err()).contains("SLU-0015");
        assertThat(line(run(db, schema, "consumer", "get", "s", "short").out(), "dead_letter_retention:")).contains(" 36h");
    }

    private static String line(String out, String prefix) {
        return out.lines().filter(l -> l.startsWith(prefix)).findFirst()
                .orElseThrow(() -> new AssertionError("no line " + prefix + " in:\n" + out)).strip();
    }
}
