package dev.sluice.cli;

import static dev.sluice.cli.CliTest.raw;
import static dev.sluice.cli.CliTest.run;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code stream extend-partitions}, and settings that nothing enforces yet are shown as such. */
@SluiceTest
class StreamPartitionsCliTest {

    @Test
    void extendPartitionsCreatesThemAheadOfTheHead(TestDatabase db) {
        String schema = db.freshSchemaName("cli_extend");
        CliTest.Run reg = run(db, schema, "stream", "register", "orders", "--partition-size", "1000", "-o", "json");
        assertThat(reg.exit()).as(reg.err()).isZero();
        long id = reg.json().get("id").asLong();
        // Another process (or a burst) took ids up to 4,500: the registration-time partitions end at 3,000.
        db.execute("SELECT setval('\"" + schema + "\".message_log_" + id + "_id_seq', 4500)");

        CliTest.Run extended = run(db, schema, "stream", "extend-partitions", "orders", "--ahead", "5", "-o", "json");
        assertThat(extended.exit()).as(extended.err()).isZero();
        JsonNode json = extended.json();
        assertThat(json.get("stream").asText()).isEqualTo("orders");
        assertThat(json.get("head_id").asLong()).isEqualTo(4500);
        assertThat(json.get("covered_up_to").asLong()).isEqualTo(10_000);
        List<String> created = new ArrayList<>();
        json.get("created").forEach(n -> created.add(n.asText()));
        List<String> expected = new ArrayList<>();
        for (int k = 3; k <= 9; k++) {
            expected.add("message_log_" + id + "_" + k);
        }
        assertThat(created).containsExactlyElementsOf(expected);

        CliTest.Run again = run(db, schema, "stream", "extend-partitions", "orders", "--ahead", "5");
        assertThat(again.exit()).as(again.err()).isZero();
        assertThat(again.out()).contains("created:").contains("0 (all existed)").contains("head_id:").contains("4500");
        CliTest.Run byDefault = run(db, schema, "stream", "extend-partitions", "orders");
        assertThat(byDefault.exit()).as(byDefault.err()).isZero();
        assertThat(byDefault.out()).as("--ahead defaults to 10: partitions 10 to 14 are new")
                .contains("5 (message_log_" + id + "_10 .. message_log_" + id + "_14)").contains("15000");

        CliTest.Run badAhead = run(db, schema, "stream", "extend-partitions", "orders", "--ahead", "0");
        assertThat(badAhead.exit()).isEqualTo(Main.FAILURE);
        assertThat(badAhead.err()).contains("SLU-0015").contains("--ahead");
        CliTest.Run missing = run(db, schema, "stream", "extend-partitions", "no-such");
        assertThat(missing.exit()).isEqualTo(Main.FAILURE);
        assertThat(missing.err()).contains("SLU-0100");
    }

    @Test
    void retentionIsShownAsNotEnforcedYet(TestDatabase db) {
        String schema = db.freshSchemaName("cli_retention");
        assertThat(run(db, schema, "stream", "register", "kept", "--retention", "7d").exit()).isZero();
        assertThat(run(db, schema, "stream", "register", "forever").exit()).isZero();

        CliTest.Run kept = run(db, schema, "stream", "get", "kept");
        assertThat(kept.exit()).as(kept.err()).isZero();
        assertThat(line(kept.out(), "retention:")).endsWith("7d (not enforced yet)");
        assertThat(line(kept.out(), "empty_compaction_head_ttl:")).endsWith("1h (not enforced yet)");
        assertThat(line(kept.out(), "idempotency_key_ttl:")).endsWith("1d (expired keys not swept yet)");
        CliTest.Run forever = run(db, schema, "stream", "get", "forever");
        assertThat(line(forever.out(), "retention:")).endsWith("forever");
        assertThat(run(db, schema, "stream", "list").out()).contains("7d (not enforced yet)");
        JsonNode json = run(db, schema, "stream", "get", "kept", "-o", "json").json();
        assertThat(json.at("/config/retention").asText()).isEqualTo("PT168H");
        List<String> notEnforced = new ArrayList<>();
        json.get("not_enforced_yet").forEach(n -> notEnforced.add(n.asText()));
        assertThat(notEnforced).contains("retention", "empty_compaction_head_ttl");

        // The usage text (on stdout for a help option, on stderr after a usage error) says so at --retention.
        CliTest.Run help = raw("stream", "register", "--help");
        assertThat((help.out() + help.err()).replaceAll("\\s+", " "))
                .contains("--retention=DURATION Keep messages this long (e.g. 7d); default: forever. Stored but not enforced yet");
    }

    private static String line(String out, String prefix) {
        return out.lines().filter(l -> l.startsWith(prefix)).findFirst()
                .orElseThrow(() -> new AssertionError("no line " + prefix + " in:\n" + out)).strip();
    }
}
