package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.embedded.test.SluiceTest;
import java.time.Duration;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** Health, schedules, locks, fleet, maintenance, the overview and the history. */
@SluiceTest
class OpsApiTest extends ServerTestBase {
    @Test
    void health() {
        JsonNode h = http.get("/api/v1/health").json();
        assertThat(h.path("status").asText()).isEqualTo("ok");
        assertThat(h.path("installed").asBoolean()).isTrue();
    }

    @Test
    void schedulesRegisterRunSuspendResumeDestroy() {
        Http.Reply put = http.put("/api/v1/schedules/nightly", Map.of("cron", "0 3 * * *", "queue", "reports",
                "payload_text", "run", "zone", "UTC"));
        assertThat(put.status()).as(put.body()).isEqualTo(201);
        assertThat(put.json().path("target").asText()).isEqualTo("reports");
        assertThat(http.put("/api/v1/schedules/often", Map.of("every", "30s", "queue", "reports")).status()).isEqualTo(201);
        assertThat(http.get("/api/v1/schedules").json().path("schedules").findValuesAsText("name")).contains("nightly", "often");
        JsonNode fire = http.post("/api/v1/schedules/nightly:run", Map.of()).json();
        assertThat(fire.path("schedule").asText()).isEqualTo("nightly");
        assertThat(f.sluice.queue("reports").stats().pending()).isEqualTo(1);
        assertThat(http.post("/api/v1/schedules/nightly:suspend", Map.of()).json().path("suspended").asBoolean()).isTrue();
        assertThat(http.post("/api/v1/schedules/nightly:resume", Map.of()).json().path("suspended").asBoolean()).isFalse();
        assertThat(http.post("/api/v1/schedules/nightly:explode", Map.of()).code()).isEqualTo("SLU-0604");
        assertThat(http.delete("/api/v1/schedules/often").status()).isEqualTo(204);
        assertThat(http.get("/api/v1/schedules/often").status()).isEqualTo(404);
        assertThat(http.put("/api/v1/schedules/bad", Map.of("cron", "61 * * * *", "queue", "q")).status()).isEqualTo(400);
        assertThat(http.put("/api/v1/schedules/bad", Map.of("cron", "* * * * *", "every", "5s", "queue", "q")).code())
                .isEqualTo("SLU-0604");
        assertThat(http.put("/api/v1/schedules/bad", Map.of("every", "5s")).code()).isEqualTo("SLU-0604");
    }

    @Test
    void locksFleetAndMaintenance() {
        try (var held = f.sluice.lock("deploy").tryAcquire(Duration.ofMinutes(1)).orElseThrow()) {
            JsonNode locks = http.get("/api/v1/locks").json().path("locks");
            assertThat(locks.findValuesAsText("name")).contains("deploy");
        }
        JsonNode fleet = http.get("/api/v1/fleet").json();
        assertThat(fleet.has("workers")).isTrue();
        assertThat(fleet.has("instances")).isTrue();
        JsonNode m = http.get("/api/v1/maintenance").json();
        assertThat(m.has("sweeps")).isTrue();
        assertThat(m.has("metrics")).isTrue();
    }

    @Test
    void overviewAndHistoryComeFromTheManagersSnapshots() {
        f.sluice.stream("watched").register();
        f.sluice.stream("watched").consumerGroup("g").register();
        f.sluice.maintenance().runOnce();
        JsonNode o = http.get("/api/v1/overview").json();
        assertThat(o.path("streams").findValuesAsText("name")).contains("watched");
        assertThat(o.path("groups").findValuesAsText("name")).contains("watched/g");
        assertThat(o.path("server").path("open_mode").asBoolean()).isTrue();
        Awaitility.await().atMost(Duration.ofSeconds(10))
                .until(() -> http.get("/api/v1/history").json().path("series").has("group:watched/g"));
    }
}
