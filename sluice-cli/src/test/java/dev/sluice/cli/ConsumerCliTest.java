package dev.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Outcome;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.time.Duration;
import org.junit.jupiter.api.Test;

@SluiceTest
class ConsumerCliTest {

    @Test
    void demoRunsToTheEndAndTheConsumerCommandsInspectIt(TestDatabase db) {
        String schema = db.freshSchemaName("cli_demo");
        CliTest.Run demo = CliTest.run(db, schema, "demo", "--messages", "1500");
        assertThat(demo.exit()).as(demo.err()).isZero();
        assertThat(demo.out()).contains("produced 1,500 messages").contains("billing").contains("shipping")
                .containsPattern("billing\\s+1,500\\s+1,500\\s+0\\s+0\\s+0");

        CliTest.Run list = CliTest.run(db, schema, "consumer", "list", "demo.orders", "-o", "json");
        assertThat(list.exit()).isZero();
        assertThat(list.json()).hasSize(2);
        long dead = list.json().get(1).get("dead").asLong();
        assertThat(list.json().get(1).get("name").asText()).isEqualTo("shipping");
        assertThat(list.json().get(0).get("lag").asLong()).isZero();

        CliTest.Run deadPage = CliTest.run(db, schema, "consumer", "dead", "demo.orders", "shipping", "--limit", "1000", "-o", "json");
        assertThat(deadPage.json().get("items")).hasSize((int) dead);
        if (dead > 0) {
            long first = deadPage.json().get("items").get(0).get("message_id").asLong();
            assertThat(CliTest.run(db, schema, "consumer", "redrive", "demo.orders", "shipping", Long.toString(first))
                    .out()).contains("redriven 1 dead letter");
            CliTest.Run purge = CliTest.run(db, schema, "consumer", "purge", "demo.orders", "shipping", "--all");
            assertThat(purge.exit()).isEqualTo(Main.USAGE);
            assertThat(CliTest.run(db, schema, "consumer", "purge", "demo.orders", "shipping", "--all", "--yes").out())
                    .contains("purged " + (dead - 1));
        }
        CliTest.Run unknown = CliTest.run(db, schema, "consumer", "redrive", "demo.orders", "shipping", "--id", "999999999");
        assertThat(unknown.exit()).isEqualTo(Main.FAILURE);
        assertThat(unknown.err()).contains("SLU-0109");
        assertThat(CliTest.run(db, schema, "consumer", "get", "demo.orders", "nope").err()).contains("SLU-0108");
    }

    @Test
    void registerAndRewind(TestDatabase db) throws Exception {
        String schema = db.freshSchemaName("cli_rewind");
        CliTest.run(db, schema, "stream", "register", "s");
        for (int i = 0; i < 3; i++) {
            CliTest.run(db, schema, "stream", "produce", "s", "--data", "m" + i);
        }
        CliTest.Run reg = CliTest.run(db, schema, "consumer", "register", "s", "g", "--start", "head", "--binding", "eu.*",
                "--concurrency", "ordered", "--max-attempts", "3", "-o", "json");
        assertThat(reg.exit()).as(reg.err()).isZero();
        assertThat(reg.json().get("committed").asLong()).isEqualTo(3);
        assertThat(reg.json().get("concurrency").asText()).isEqualTo("ordered");
        assertThat(CliTest.run(db, schema, "consumer", "register", "s", "h", "--binding", "bad pattern").err()).contains("SLU-0010");

        // Rewind is refused while a consumer is live, and allowed with --force.
        try (Sluice sluice = Sluice.builder().jdbcUrl(db.jdbcUrl()).schema(schema).build();
             var c = sluice.stream("s").consumerGroup("g").consume(m -> Outcome.success())) {
            CliTest.Run refused = CliTest.run(db, schema, "consumer", "rewind", "s", "g", "--to-id", "1");
            assertThat(refused.exit()).isEqualTo(Main.FAILURE);
            assertThat(refused.err()).contains("SLU-0110");
            assertThat(CliTest.run(db, schema, "consumer", "rewind", "s", "g", "--to-id", "1", "--force").exit()).isZero();
        }
        CliTest.Run rewound = CliTest.run(db, schema, "consumer", "rewind", "s", "g", "--to-time", "2000-01-01T00:00:00Z", "-o", "json");
        assertThat(rewound.json().get("committed").asLong()).isZero();
        assertThat(CliTest.run(db, schema, "consumer", "rewind", "s", "g", "--to-time", "yesterday").err()).contains("SLU-0015");
        assertThat(CliTest.run(db, schema, "consumer", "rewind", "s", "g").exit()).isEqualTo(Main.USAGE);
    }
}
