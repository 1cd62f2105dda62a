package dev.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

@SluiceTest
class MaintenanceCliTest {
    static final List<String> SWEEP_STATUS_FIELDS = List.of("name", "last_run_at", "removed", "took_ms", "error", "run_by",
            "runs", "failures");
    static final List<String> SWEEP_RESULT_FIELDS = List.of("name", "removed", "took_ms", "error", "skipped");
    static final List<String> METRIC_FIELDS = List.of("kind", "name", "taken_at", "head", "committed", "lag", "backlog",
            "retrying", "dead", "pending", "processing", "rate_per_second");
    static final List<String> MANAGER_FIELDS = List.of("holder", "instance_id", "since", "renewed_at", "expires_at");

    static List<String> names(JsonNode sweeps) {
        List<String> names = new ArrayList<>();
        sweeps.forEach(s -> names.add(s.get("name").asText()));
        return names;
    }

    static JsonNode named(JsonNode list, String field, String value) {
        for (JsonNode n : list) {
            if (n.get(field).asText().equals(value)) {
                return n;
            }
        }
        return null;
    }

    @Test
    void runReportsEachSweepAndStatusRecordsIt(TestDatabase db) {
        String schema = db.freshSchemaName("cli_maint_run");
        // Before anything is installed: no manager, not paused, nothing ran.
        CliTest.Run empty = CliTest.run(db, schema, "maintenance", "status", "-o", "json");
        assertThat(empty.exit()).as(empty.err()).isZero();
        assertThat(FleetCliTest.fields(empty.json())).containsExactly("manager", "paused", "sweeps");
        assertThat(empty.json().get("manager").isNull()).isTrue();
        assertThat(empty.json().get("paused").asBoolean()).isFalse();
        assertThat(empty.json().get("sweeps")).isEmpty();
        CliTest.Run emptyText = CliTest.run(db, schema, "maintenance", "status");
        assertThat(emptyText.out()).containsPattern("manager:\\s+none").containsPattern("paused:\\s+no")
                .contains("no sweep has run");

        // One pass (it installs the control plane of a fresh schema).
        CliTest.Run run = CliTest.run(db, schema, "maintenance", "run", "-o", "json");
        assertThat(run.exit()).as(run.out() + run.err()).isZero();
        JsonNode report = run.json();
        assertThat(FleetCliTest.fields(report)).containsExactly("ok", "took_ms", "sweeps");
        assertThat(report.get("ok").asBoolean()).isTrue();
        assertThat(report.get("took_ms").isNumber()).isTrue();
        assertThat(report.get("took_ms").asDouble()).isPositive();
        assertThat(names(report.get("sweeps"))).contains("worker_instances", "instance_log", "queue_rescue", "queue_expiry",
                "dead_jobs", "metrics");
        for (JsonNode s : report.get("sweeps")) {
            assertThat(FleetCliTest.fields(s)).containsExactlyElementsOf(SWEEP_RESULT_FIELDS);
            assertThat(s.get("removed").isIntegralNumber()).isTrue();
            assertThat(s.get("removed").asLong()).isNotNegative();
            assertThat(s.get("took_ms").isNumber()).isTrue();
            assertThat(s.get("error").isNull()).as(s.toString()).isTrue();
        }

        CliTest.Run text = CliTest.run(db, schema, "maintenance", "run");
        assertThat(text.exit()).as(text.err()).isZero();
        assertThat(text.out()).containsPattern("SWEEP\\s+REMOVED\\s+TOOK\\s+ERROR")
                .containsPattern("queue_rescue\\s+0\\s+[0-9.]+ m?s\\s+-").containsPattern("pass took [0-9.]+ m?s, [0-9]+ sweeps\\n");
        assertThat(text.err()).isEmpty();

        CliTest.Run status = CliTest.run(db, schema, "maintenance", "status", "-o", "json");
        assertThat(status.exit()).as(status.err()).isZero();
        JsonNode doc = status.json();
        assertThat(doc.get("manager").isNull()).as("no client competes for the manager").isTrue();
        assertThat(doc.get("paused").asBoolean()).isFalse();
        assertThat(names(doc.get("sweeps"))).containsAll(names(report.get("sweeps")));
        for (JsonNode s : doc.get("sweeps")) {
            assertThat(FleetCliTest.fields(s)).containsExactlyElementsOf(SWEEP_STATUS_FIELDS);
            Instant.parse(s.get("last_run_at").asText());
            assertThat(s.get("runs").asLong()).isEqualTo(2);
            assertThat(s.get("failures").asLong()).isZero();
            assertThat(s.get("error").isNull()).isTrue();
            assertThat(s.get("run_by").asText()).isNotBlank();
            assertThat(s.get("took_ms").isNumber()).isTrue();
        }
        CliTest.Run statusText = CliTest.run(db, schema, "maintenance", "status");
        assertThat(statusText.out()).containsPattern("manager:\\s+none")
                .containsPattern("SWEEP\\s+LAST_RUN_AT\\s+REMOVED\\s+TOOK\\s+RUN_BY\\s+RUNS\\s+FAILURES\\s+ERROR")
                .containsPattern("dead_jobs\\s+\\S+\\s+0\\s+[0-9.]+ m?s\\s+\\S+\\s+2\\s+0\\s+-");

        // Paused by an operator: the manager worker's target is 0.
        assertThat(CliTest.run(db, schema, "fleet", "set-target", "manager", "0").exit()).isZero();
        assertThat(CliTest.run(db, schema, "maintenance", "status", "-o", "json").json().get("paused").asBoolean()).isTrue();
        assertThat(CliTest.run(db, schema, "maintenance", "status").out()).containsPattern("paused:\\s+yes");
        assertThat(CliTest.run(db, schema, "maintenance", "run").exit()).as("run-once works while paused").isZero();
        assertThat(CliTest.run(db, schema, "fleet", "set-target", "manager", "1").exit()).isZero();
        assertThat(CliTest.run(db, schema, "maintenance", "status", "-o", "json").json().get("paused").asBoolean()).isFalse();
    }

    @Test
    void statusNamesTheElectedManager(TestDatabase db) throws Exception {
        String schema = db.freshSchemaName("cli_maint_manager");
        CliTest.run(db, schema, "stream", "register", "s");
        try (Sluice app = Sluice.builder().jdbcUrl(db.jdbcUrl()).schema(schema).clientId("maint-manager-app").build();
             Producer<byte[]> p = app.stream("s").producer()) {
            p.produce("x".getBytes(StandardCharsets.UTF_8));
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            JsonNode doc;
            do {
                CliTest.Run status = CliTest.run(db, schema, "maintenance", "status", "-o", "json");
                assertThat(status.exit()).as(status.err()).isZero();
                doc = status.json();
                if (!doc.get("manager").isNull()) {
                    break;
                }
                Thread.sleep(100);
            } while (System.nanoTime() < deadline);
            JsonNode manager = doc.get("manager");
            assertThat(manager.isNull()).as("the application's client was elected: " + doc).isFalse();
            assertThat(FleetCliTest.fields(manager)).containsExactlyElementsOf(MANAGER_FIELDS);
            assertThat(manager.get("holder").asText()).isEqualTo("maint-manager-app");
            assertThat(manager.get("instance_id").asLong()).isPositive();
            assertThat(Instant.parse(manager.get("expires_at").asText())).isAfter(Instant.parse(manager.get("since").asText()));
            Instant.parse(manager.get("renewed_at").asText());
            assertThat(CliTest.run(db, schema, "maintenance", "status").out())
                    .containsPattern("manager:\\s+maint-manager-app \\(since \\S+, expires \\S+\\)");
            // The CLI's own pass runs beside the manager's, whoever the manager is.
            assertThat(CliTest.run(db, schema, "maintenance", "run").exit()).isZero();
            assertThat(CliTest.run(db, schema, "maintenance", "status", "-o", "json").json().at("/manager/holder").asText())
                    .isEqualTo("maint-manager-app");
        }
    }

    @Test
    void metricsListTheSnapshotsOfStreamsGroupsAndQueues(TestDatabase db) {
        String schema = db.freshSchemaName("cli_maint_metrics");
        CliTest.run(db, schema, "system", "register");
        CliTest.Run none = CliTest.run(db, schema, "maintenance", "metrics", "-o", "json");
        assertThat(none.exit()).as(none.err()).isZero();
        assertThat(none.json().isArray()).isTrue();
        assertThat(none.json()).isEmpty();
        assertThat(CliTest.run(db, schema, "maintenance", "metrics").out()).contains("no metric snapshots");

        CliTest.run(db, schema, "stream", "register", "orders");
        for (int i = 0; i < 3; i++) {
            assertThat(CliTest.run(db, schema, "stream", "produce", "orders", "--data", "m" + i).exit()).isZero();
        }
        CliTest.run(db, schema, "consumer", "register", "orders", "billing");
        CliTest.run(db, schema, "queue", "enqueue", "mail", "--data", "hi");
        // Both due: a scheduled job would be counted twice in 'pending' by sluice-core's MetricSnapshots
        // (QueueInfo.pending already includes the scheduled ones), which is reported, not pinned here.
        CliTest.run(db, schema, "queue", "enqueue", "mail", "--data", "again");
        assertThat(CliTest.run(db, schema, "maintenance", "run").exit()).isZero();

        CliTest.Run metrics = CliTest.run(db, schema, "maintenance", "metrics", "-o", "json");
        assertThat(metrics.exit()).as(metrics.err()).isZero();
        JsonNode list = metrics.json();
        for (JsonNode m : list) {
            assertThat(FleetCliTest.fields(m)).containsExactlyElementsOf(METRIC_FIELDS);
            Instant.parse(m.get("taken_at").asText());
        }
        JsonNode stream = named(list, "name", "orders");
        assertThat(stream).as(list.toString()).isNotNull();
        assertThat(stream.get("kind").asText()).isEqualTo("stream");
        assertThat(stream.get("head").asLong()).isEqualTo(3);
        assertThat(stream.get("pending").isNull()).isTrue();
        JsonNode group = named(list, "name", "orders/billing");
        assertThat(group).as(list.toString()).isNotNull();
        assertThat(group.get("kind").asText()).isEqualTo("group");
        assertThat(group.get("head").asLong()).isEqualTo(3);
        assertThat(group.get("committed").asLong()).isZero();
        assertThat(group.get("lag").asLong()).isEqualTo(3);
        assertThat(group.get("backlog").asLong()).isEqualTo(3);
        assertThat(group.get("dead").asLong()).isZero();
        JsonNode queue = named(list, "name", "mail");
        assertThat(queue).as(list.toString()).isNotNull();
        assertThat(queue.get("kind").asText()).isEqualTo("queue");
        assertThat(queue.get("pending").asLong()).isEqualTo(2);
        assertThat(queue.get("processing").asLong()).isZero();
        assertThat(queue.get("head").isNull()).isTrue();

        CliTest.Run text = CliTest.run(db, schema, "maintenance", "metrics");
        assertThat(text.exit()).as(text.err()).isZero();
        assertThat(text.out())
                .containsPattern("KIND\\s+NAME\\s+HEAD\\s+COMMITTED\\s+LAG\\s+BACKLOG\\s+RETRYING\\s+DEAD\\s+PENDING\\s+PROCESSING\\s+RATE_PER_S\\s+TAKEN_AT")
                .containsPattern("group\\s+orders/billing\\s+3\\s+0\\s+3\\s+3\\s+")
                .containsPattern("queue\\s+mail\\s+-\\s+-\\s+-\\s+-\\s+-\\s+0\\s+2\\s+0\\s+");
    }

    @Test
    void aFailedSweepExitsOneAndTheOthersStillRun(TestDatabase db) {
        String schema = db.freshSchemaName("cli_maint_fail");
        CliTest.run(db, schema, "system", "register");
        db.execute("ALTER TABLE \"" + schema + "\".job_dead RENAME TO job_dead_away");
        try {
            CliTest.Run json = CliTest.run(db, schema, "maintenance", "run", "-o", "json");
            assertThat(json.exit()).as(json.out() + json.err()).isEqualTo(Main.FAILURE);
            assertThat(json.json().get("ok").asBoolean()).isFalse();
            JsonNode dead = named(json.json().get("sweeps"), "name", "dead_jobs");
            assertThat(dead.get("error").asText()).isNotBlank();
            assertThat(named(json.json().get("sweeps"), "name", "worker_instances").get("error").isNull())
                    .as("the other sweeps ran").isTrue();

            CliTest.Run text = CliTest.run(db, schema, "maintenance", "run");
            assertThat(text.exit()).isEqualTo(Main.FAILURE);
            assertThat(text.out()).containsPattern("dead_jobs\\s+0\\s+[0-9.]+ m?s\\s+\\S").containsPattern("[0-9]+ failed\\n");
            assertThat(text.err()).containsPattern("error: [0-9]+ of [0-9]+ sweeps failed");

            JsonNode status = CliTest.run(db, schema, "maintenance", "status", "-o", "json").json();
            JsonNode recorded = named(status.get("sweeps"), "name", "dead_jobs");
            assertThat(recorded.get("failures").asLong()).isEqualTo(2);
            assertThat(recorded.get("error").asText()).isNotBlank();
            assertThat(CliTest.run(db, schema, "maintenance", "status").out()).containsPattern("dead_jobs\\s+.*\\s+2\\s+2\\s+\\S+");
        } finally {
            db.execute("ALTER TABLE \"" + schema + "\".job_dead_away RENAME TO job_dead");
        }
        assertThat(CliTest.run(db, schema, "maintenance", "run").exit()).isZero();
        JsonNode recorded = named(CliTest.run(db, schema, "maintenance", "status", "-o", "json").json().get("sweeps"),
                "name", "dead_jobs");
        assertThat(recorded.get("error").isNull()).isTrue();
        assertThat(recorded.get("runs").asLong()).isEqualTo(3);
        assertThat(recorded.get("failures").asLong()).isEqualTo(2);
    }

    @Test
    void everyMaintenanceCommandAnswersHelpWithADescription() {
        CliTest.Run top = CliTest.raw("maintenance", "--help");
        assertThat(top.exit()).isZero();
        assertThat(top.out()).contains("Usage: sluice maintenance").contains("status").contains("run").contains("metrics")
                .contains("set-target manager 0");
        CliTest.Run status = CliTest.raw("maintenance", "status", "-h");
        assertThat(status.exit()).isZero();
        assertThat(status.out()).contains("Usage: sluice maintenance status").contains("manager");
        CliTest.Run run = CliTest.raw("maintenance", "run", "--help");
        assertThat(run.exit()).isZero();
        assertThat(run.out()).contains("Usage: sluice maintenance run").contains("Exits 1 when any sweep failed");
        CliTest.Run metrics = CliTest.raw("maintenance", "metrics", "--help");
        assertThat(metrics.exit()).isZero();
        assertThat(metrics.out()).contains("Usage: sluice maintenance metrics").contains("snapshots");
        assertThat(CliTest.raw("maintenance", "run", "extra").exit()).isEqualTo(Main.USAGE);
        assertThat(CliTest.raw("maintenance", "nonsense").exit()).isEqualTo(Main.USAGE);
    }
}
