package dev.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.Consumption;
import dev.sluice.Outcome;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

@SluiceTest
class FleetCliTest {
    static final List<String> WORKER_FIELDS = List.of("key", "target", "live", "active", "paused", "updated_at");
    static final List<String> INSTANCE_FIELDS = List.of("id", "worker", "holder", "state", "failures", "created_at",
            "renewed_at", "expires_at");

    static List<String> fields(JsonNode node) {
        List<String> names = new ArrayList<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }

    static JsonNode worker(JsonNode list, String key) {
        for (JsonNode w : list.get("workers")) {
            if (w.get("key").asText().equals(key)) {
                return w;
            }
        }
        return null;
    }

    /** Runs {@code fleet list --instances -o json} until the document satisfies {@code until} (at most 15 s). */
    static JsonNode fleetUntil(TestDatabase db, String schema, Predicate<JsonNode> until) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (true) {
            CliTest.Run r = CliTest.run(db, schema, "fleet", "list", "--instances", "-o", "json");
            assertThat(r.exit()).as(r.err()).isZero();
            if (until.test(r.json()) || System.nanoTime() > deadline) {
                return r.json();
            }
            Thread.sleep(100);
        }
    }

    @Test
    void listShowsWorkersAndInstancesAsTextAndJson(TestDatabase db) throws Exception {
        String schema = db.freshSchemaName("cli_fleet_list");
        CliTest.Run none = CliTest.run(db, schema, "fleet", "list", "-o", "json");
        assertThat(none.exit()).as(none.err()).isZero();
        assertThat(fields(none.json())).containsExactly("workers");
        assertThat(none.json().get("workers")).isEmpty();
        assertThat(CliTest.run(db, schema, "fleet", "list").out()).contains("no workers in schema '" + schema + "'");

        CliTest.run(db, schema, "stream", "register", "orders");
        assertThat(CliTest.run(db, schema, "consumer", "register", "orders", "billing").exit()).isZero();
        try (Sluice app = Sluice.builder().jdbcUrl(db.jdbcUrl()).schema(schema).clientId("fleet-test-app")
                .maintenance(false).build();
             Consumption c = app.stream("orders").consumerGroup("billing").consume(m -> Outcome.success())) {
            JsonNode doc = fleetUntil(db, schema, d -> worker(d, "consumer:orders/billing") != null
                    && worker(d, "consumer:orders/billing").get("live").asInt() == 1);
            assertThat(fields(doc)).containsExactly("workers", "instances");
            JsonNode w = worker(doc, "consumer:orders/billing");
            assertThat(w).as(doc.toString()).isNotNull();
            assertThat(fields(w)).containsExactlyElementsOf(WORKER_FIELDS);
            assertThat(w.get("target").asInt()).isEqualTo(-1);
            assertThat(w.get("live").asInt()).isEqualTo(1);
            assertThat(w.get("active").asInt()).isEqualTo(1);
            assertThat(w.get("paused").asBoolean()).isFalse();
            Instant.parse(w.get("updated_at").asText());

            JsonNode instance = null;
            for (JsonNode i : doc.get("instances")) {
                if (i.get("worker").asText().equals("consumer:orders/billing")) {
                    instance = i;
                }
            }
            assertThat(instance).as(doc.toString()).isNotNull();
            assertThat(fields(instance)).containsExactlyElementsOf(INSTANCE_FIELDS);
            assertThat(instance.get("id").asLong()).isPositive();
            assertThat(instance.get("holder").asText()).isEqualTo("fleet-test-app");
            assertThat(instance.get("state").asText()).isEqualTo("active");
            assertThat(instance.get("failures").asInt()).isZero();
            Instant created = Instant.parse(instance.get("created_at").asText());
            Instant renewed = Instant.parse(instance.get("renewed_at").asText());
            Instant expires = Instant.parse(instance.get("expires_at").asText());
            assertThat(renewed).isAfterOrEqualTo(created);
            assertThat(expires).isAfter(renewed);
            // This client runs with maintenance off: it holds no manager instance.
            for (JsonNode i : doc.get("instances")) {
                assertThat(i.get("worker").asText()).isNotEqualTo("manager");
            }

            CliTest.Run text = CliTest.run(db, schema, "fleet", "list");
            assertThat(text.exit()).as(text.err()).isZero();
            assertThat(text.out()).containsPattern("WORKER\\s+TARGET\\s+LIVE\\s+ACTIVE\\s+PAUSED")
                    .containsPattern("consumer:orders/billing\\s+-1 \\(unlimited\\)\\s+1\\s+1\\s+no")
                    .doesNotContain("HOLDER");
            CliTest.Run withInstances = CliTest.run(db, schema, "fleet", "list", "--instances");
            assertThat(withInstances.out())
                    .containsPattern("ID\\s+WORKER\\s+HOLDER\\s+STATE\\s+FAILURES\\s+CREATED_AT\\s+RENEWED_AT\\s+EXPIRES_AT")
                    .containsPattern("consumer:orders/billing\\s+fleet-test-app\\s+active\\s+0\\s+");
        }
        // A closed client deletes its instances.
        JsonNode after = CliTest.run(db, schema, "fleet", "list", "--instances", "-o", "json").json();
        assertThat(worker(after, "consumer:orders/billing").get("live").asInt()).isZero();
        assertThat(after.get("instances")).isEmpty();
        assertThat(CliTest.run(db, schema, "fleet", "list", "--instances").out()).contains("no instances");
    }

    @Test
    void setTargetPausesAndResumesARegisteredGroup(TestDatabase db) throws Exception {
        String schema = db.freshSchemaName("cli_fleet_target");
        CliTest.run(db, schema, "stream", "register", "s");
        assertThat(CliTest.run(db, schema, "consumer", "register", "s", "g").exit()).isZero();
        try (Sluice app = Sluice.builder().jdbcUrl(db.jdbcUrl()).schema(schema).clientId("target-app").maintenance(false).build();
             Consumption c = app.stream("s").consumerGroup("g").consume(m -> Outcome.success())) {
            fleetUntil(db, schema, d -> worker(d, "consumer:s/g") != null && worker(d, "consumer:s/g").get("live").asInt() == 1);

            CliTest.Run paused = CliTest.run(db, schema, "fleet", "set-target", "consumer:s/g", "0", "-o", "json");
            assertThat(paused.exit()).as(paused.err()).isZero();
            assertThat(fields(paused.json())).containsExactlyElementsOf(WORKER_FIELDS);
            assertThat(paused.json().get("key").asText()).isEqualTo("consumer:s/g");
            assertThat(paused.json().get("target").asInt()).isZero();
            assertThat(paused.json().get("paused").asBoolean()).isTrue();
            assertThat(paused.json().get("active").asInt()).isZero();
            JsonNode listed = CliTest.run(db, schema, "fleet", "list", "--instances", "-o", "json").json();
            assertThat(worker(listed, "consumer:s/g").get("target").asInt()).isZero();
            assertThat(listed.get("instances").get(0).get("state").asText()).isEqualTo("paused");

            // -1 is a value, not an option, wherever -o json stands.
            CliTest.Run resumed = CliTest.run(db, schema, "fleet", "set-target", "-o", "json", "consumer:s/g", "-1");
            assertThat(resumed.exit()).as(resumed.err()).isZero();
            assertThat(resumed.json().get("target").asInt()).isEqualTo(-1);
            assertThat(resumed.json().get("paused").asBoolean()).isFalse();
            assertThat(resumed.json().get("active").asInt()).isEqualTo(1);
            listed = CliTest.run(db, schema, "fleet", "list", "--instances", "-o", "json").json();
            assertThat(worker(listed, "consumer:s/g").get("target").asInt()).isEqualTo(-1);
            assertThat(listed.get("instances").get(0).get("state").asText()).isEqualTo("active");

            CliTest.Run capped = CliTest.run(db, schema, "fleet", "set-target", "consumer:s/g", "3");
            assertThat(capped.exit()).as(capped.err()).isZero();
            assertThat(capped.out()).containsPattern("worker:\\s+consumer:s/g").containsPattern("target:\\s+3")
                    .containsPattern("paused:\\s+no");
            CliTest.Run text = CliTest.run(db, schema, "fleet", "set-target", "consumer:s/g", "-1");
            assertThat(text.out()).containsPattern("target:\\s+-1 \\(unlimited\\)");
        }
    }

    @Test
    void badTargetsAndKeysAreCodedAndUsageErrorsExitTwo(TestDatabase db) {
        String schema = db.freshSchemaName("cli_fleet_bad");
        CliTest.run(db, schema, "stream", "register", "s");
        CliTest.run(db, schema, "consumer", "register", "s", "g");

        // Below -1: parsed as a value (not as an unknown option "-2"), refused by the library.
        CliTest.Run below = CliTest.run(db, schema, "fleet", "set-target", "consumer:s/g", "-2");
        HostileArgumentsCliTest.expectCode(below, "SLU-0015");
        assertThat(below.err()).contains("target instances must be -1").doesNotContain("Unknown option");
        CliTest.Run belowJson = CliTest.run(db, schema, "fleet", "set-target", "consumer:s/g", "-2", "-o", "json");
        assertThat(belowJson.exit()).isEqualTo(Main.FAILURE);
        assertThat(belowJson.json().at("/error/code").asText()).isEqualTo("SLU-0015");
        assertThat(belowJson.json().at("/error/name").asText()).isEqualTo("INVALID_ARGUMENT");
        HostileArgumentsCliTest.expectCode(CliTest.run(db, schema, "fleet", "set-target", "consumer:s/g", "10001"), "SLU-0015");
        HostileArgumentsCliTest.expectCode(CliTest.run(db, schema, "fleet", "set-target", "consumer:s/g", "-99999999999"), "SLU-0015");
        CliTest.Run notNumber = CliTest.run(db, schema, "fleet", "set-target", "consumer:s/g", "many");
        HostileArgumentsCliTest.expectCode(notNumber, "SLU-0015");
        assertThat(notNumber.err()).contains("'many' is not a whole number");
        HostileArgumentsCliTest.expectCode(CliTest.run(db, schema, "fleet", "set-target", "manager", "2"), "SLU-0015");

        // Malformed keys.
        for (String key : List.of("bogus", "consumer:s", "consumer:/g", "queue:", "queue:Bad Name", "consumer:s/g/h", "")) {
            CliTest.Run r = CliTest.run(db, schema, "fleet", "set-target", key, "0");
            HostileArgumentsCliTest.expectCode(r, "SLU-0015");
        }
        CliTest.Run hostile = CliTest.run(db, schema, "fleet", "set-target", "queue:" + HostileArgumentsCliTest.TITLE, "0");
        HostileArgumentsCliTest.expectCode(hostile, "SLU-0015");
        assertThat(hostile.out() + hostile.err()).doesNotContain(HostileArgumentsCliTest.ESC);

        // A well-formed key of a worker that does not exist.
        CliTest.Run unknown = CliTest.run(db, schema, "fleet", "set-target", "consumer:s/nope", "0");
        HostileArgumentsCliTest.expectCode(unknown, "SLU-0119");
        assertThat(unknown.err()).contains("consumer:s/nope");
        CliTest.Run unknownJson = CliTest.run(db, schema, "fleet", "set-target", "consumer:s/nope", "0", "-o", "json");
        assertThat(unknownJson.exit()).isEqualTo(Main.FAILURE);
        assertThat(unknownJson.json().at("/error/name").asText()).isEqualTo("WORKER_NOT_FOUND");

        // Nothing was changed by the refusals.
        JsonNode listed = CliTest.run(db, schema, "fleet", "list", "-o", "json").json();
        assertThat(worker(listed, "consumer:s/g").get("target").asInt()).isEqualTo(-1);

        // Usage errors.
        assertThat(CliTest.run(db, schema, "fleet", "set-target", "consumer:s/g").exit()).isEqualTo(Main.USAGE);
        assertThat(CliTest.run(db, schema, "fleet", "set-target").exit()).isEqualTo(Main.USAGE);
        assertThat(CliTest.run(db, schema, "fleet", "set-target", "consumer:s/g", "1", "2").exit()).isEqualTo(Main.USAGE);
        assertThat(CliTest.run(db, schema, "fleet", "set-target", "consumer:s/g", "--target", "1").exit()).isEqualTo(Main.USAGE);
        assertThat(CliTest.run(db, schema, "fleet", "list", "--bogus").exit()).isEqualTo(Main.USAGE);
        assertThat(CliTest.run(db, schema, "fleet", "nonsense").exit()).isEqualTo(Main.USAGE);
    }

    @Test
    void oneShotCommandsDoNotCompeteForTheManagerButScheduleServeDoes(TestDatabase db) {
        String schema = db.freshSchemaName("cli_fleet_manager");
        CliTest.run(db, schema, "stream", "register", "s");
        // A producer is a running part: with maintenance on, the client would declare and join the manager worker.
        assertThat(CliTest.run(db, schema, "stream", "produce", "s", "--data", "x").exit()).isZero();
        assertThat(CliTest.run(db, schema, "queue", "enqueue", "q", "--data", "x").exit()).isZero();
        assertThat(CliTest.run(db, schema, "maintenance", "run").exit()).isZero();
        assertThat(worker(CliTest.run(db, schema, "fleet", "list", "-o", "json").json(), "manager"))
                .as("no one-shot command joined the manager").isNull();

        CliTest.Run serve = CliTest.run(db, schema, "schedule", "serve", "--for", "1s");
        assertThat(serve.exit()).as(serve.err()).isZero();
        JsonNode listed = CliTest.run(db, schema, "fleet", "list", "-o", "json").json();
        assertThat(worker(listed, "schedules")).as(listed.toString()).isNotNull();
        assertThat(worker(listed, "manager")).as("'schedule serve' competes for the manager: " + listed).isNotNull();
    }

    @Test
    void everyFleetCommandAnswersHelpWithADescription() {
        CliTest.Run fleet = CliTest.raw("fleet", "--help");
        assertThat(fleet.exit()).isZero();
        assertThat(fleet.out()).contains("Usage: sluice fleet").contains("consumer:STREAM/GROUP").contains("list")
                .contains("set-target");
        CliTest.Run list = CliTest.raw("fleet", "list", "-h");
        assertThat(list.exit()).isZero();
        assertThat(list.out()).contains("Usage: sluice fleet list").contains("--instances").contains("standby");
        CliTest.Run set = CliTest.raw("fleet", "set-target", "--help");
        assertThat(set.exit()).isZero();
        assertThat(set.out()).contains("Usage: sluice fleet set-target").contains("WORKER").contains("-1 unlimited")
                .contains("0 paused").contains("SLU-0119");
        assertThat(CliTest.raw("--help").out()).contains("fleet").contains("maintenance");
    }
}
