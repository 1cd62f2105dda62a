package dev.sluice.cli;

import static dev.sluice.cli.CliTest.run;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code stream extend-partitions}. */
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
}
