package dev.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.Consumption;
import dev.sluice.Outcome;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@code consumer register --partitions}, the bucket table of {@code consumer get}, and {@code consumer repartition}. */
@SluiceTest
class ConsumerPartitionsCliTest {

    @Test
    void registerGetAndRepartitionAPartitionedGroup(TestDatabase db) throws Exception {
        String schema = db.freshSchemaName("cli_partitions");
        assertThat(CliTest.run(db, schema, "stream", "register", "orders").exit()).isZero();
        CliTest.Run reg = CliTest.run(db, schema, "consumer", "register", "orders", "billing", "--partitions", "4", "-o", "json");
        assertThat(reg.exit()).as(reg.err()).isZero();
        assertThat(reg.json().get("partitions").asInt()).isEqualTo(4);
        assertThat(reg.json().get("concurrency").asText()).isEqualTo("ordered");
        assertThat(reg.json().get("buckets")).hasSize(4);

        try (Sluice app = Sluice.builder().jdbcUrl(db.jdbcUrl()).schema(schema).clientId("cli-part-app")
                .fleetLease(Duration.ofSeconds(3)).maintenance(false).build();
             Consumption c = app.stream("orders").consumerGroup("billing").consume(m -> Outcome.success())) {
            JsonNode doc = null;
            long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
            while (System.nanoTime() < deadline) {
                CliTest.Run get = CliTest.run(db, schema, "consumer", "get", "orders", "billing", "-o", "json");
                assertThat(get.exit()).as(get.err()).isZero();
                doc = get.json();
                boolean allOwned = true;
                for (JsonNode b : doc.get("buckets")) {
                    allOwned &= !b.get("owner_instance_id").isNull();
                }
                if (allOwned) {
                    break;
                }
                Thread.sleep(100);
            }
            assertThat(doc.get("buckets")).hasSize(4).allSatisfy(b -> {
                assertThat(b.get("owner_instance_id").isNull()).as(b.toString()).isFalse();
                assertThat(b.get("holder").asText()).isEqualTo("cli-part-app");
                assertThat(b.get("position").asLong()).isZero();
            });
            CliTest.Run text = CliTest.run(db, schema, "consumer", "get", "orders", "billing");
            assertThat(text.out()).contains("BUCKET", "POSITION", "OWNER", "HOLDER", "cli-part-app");
            // Not paused: refused, nothing changed.
            CliTest.Run live = CliTest.run(db, schema, "consumer", "repartition", "orders", "billing", "--partitions", "8");
            assertThat(live.exit()).isEqualTo(Main.FAILURE);
            assertThat(live.err()).contains("SLU-0110");
        }
        assertThat(CliTest.run(db, schema, "fleet", "set-target", "consumer:orders/billing", "0").exit()).isZero();
        CliTest.Run changed = CliTest.run(db, schema, "consumer", "repartition", "orders", "billing", "--partitions", "8", "-o", "json");
        assertThat(changed.exit()).as(changed.err()).isZero();
        assertThat(changed.json().get("partitions").asInt()).isEqualTo(8);
        assertThat(changed.json().get("buckets")).hasSize(8);

        // Another count at registration: a coded conflict, nothing changed.
        CliTest.Run other = CliTest.run(db, schema, "consumer", "register", "orders", "billing", "--partitions", "4");
        assertThat(other.exit()).isEqualTo(Main.FAILURE);
        assertThat(other.err()).contains("SLU-0120");
        assertThat(CliTest.run(db, schema, "consumer", "get", "orders", "billing", "-o", "json").json().get("partitions").asInt())
                .isEqualTo(8);
    }

    @Test
    void badCountsAreCodedErrors(TestDatabase db) {
        String schema = db.freshSchemaName("cli_partitions_bad");
        assertThat(CliTest.run(db, schema, "stream", "register", "orders").exit()).isZero();
        for (String bad : new String[] {"0", "-3", "1025"}) {
            CliTest.Run r = CliTest.run(db, schema, "consumer", "register", "orders", "g", "--partitions", bad);
            assertThat(r.exit()).as(bad).isEqualTo(Main.FAILURE);
            assertThat(r.err()).as(bad).contains("partitions must be between 1 and 1024");
        }
        CliTest.Run notNumber = CliTest.run(db, schema, "consumer", "register", "orders", "g", "--partitions", "many");
        assertThat(notNumber.exit()).isEqualTo(Main.USAGE);
        CliTest.Run mixed = CliTest.run(db, schema, "consumer", "register", "orders", "g", "--partitions", "4",
                "--concurrency", "parallel");
        assertThat(mixed.exit()).isEqualTo(Main.FAILURE);
        assertThat(mixed.err()).contains("keeps per-key order");
        assertThat(CliTest.run(db, schema, "consumer", "repartition", "-h").exit()).isZero();
        assertThat(CliTest.run(db, schema, "consumer", "repartition", "orders", "g").exit()).isEqualTo(Main.USAGE);
    }
}
