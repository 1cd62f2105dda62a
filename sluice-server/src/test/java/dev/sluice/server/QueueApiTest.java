package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.embedded.test.SluiceTest;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** Queue routes: enqueue, list, claim (long-poll), resolve by claim token, dead jobs, runs. */
@SluiceTest
class QueueApiTest extends ServerTestBase {
    private static long enqueue(String queue, Map<String, Object> job) {
        Http.Reply r = http.post("/api/v1/queues/" + queue + "/jobs", job);
        assertThat(r.status()).as(r.body()).isEqualTo(201);
        return r.json().path("id").asLong();
    }

    private static JsonNode claim(String queue, int max, String wait) {
        Http.Reply r = http.post("/api/v1/queues/" + queue + "/claims", Map.of("max", max, "wait", wait));
        assertThat(r.status()).as(r.body()).isEqualTo(200);
        return r.json().path("jobs");
    }

    @Test
    void enqueueClaimAndAckWithTheClaimToken() {
        long id = enqueue("emails", Map.of("payload", Map.of("to", "a@example.com"), "priority", 5, "headers", Map.of("h", "v"),
                "unique_key", "welcome-a", "keep_runs", "1h"));
        assertThat(enqueue("emails", Map.of("payload", Map.of("to", "a@example.com"), "unique_key", "welcome-a"))).isEqualTo(id);
        JsonNode listed = http.get("/api/v1/queues/emails/jobs?state=pending").json().path("jobs");
        assertThat(listed.get(0).path("id").asLong()).isEqualTo(id);
        assertThat(listed.get(0).path("priority").asInt()).isEqualTo(5);
        assertThat(http.get("/api/v1/queues/emails/jobs/" + id).json().path("state").asText()).isEqualTo("pending");

        assertThat(http.get("/api/v1/queues").json().path("queues").findValuesAsText("name")).contains("emails");
        JsonNode jobs = claim("emails", 10, "1s");
        assertThat(jobs).hasSize(1);
        JsonNode job = jobs.get(0);
        assertThat(job.path("payload_text").asText()).isEqualTo("{\"to\":\"a@example.com\"}");
        assertThat(job.path("headers").path("h").asText()).isEqualTo("v");
        String token = job.path("claim_token").asText();
        assertThat(http.post("/api/v1/queues/emails/jobs/" + id + ":heartbeat", Map.of("claim_token", token)).json()
                .path("claim_expires_at").asText()).isNotEmpty();
        Http.Reply wrong = http.post("/api/v1/queues/emails/jobs/" + id + ":ack",
                Map.of("claim_token", java.util.UUID.randomUUID().toString()));
        assertThat(wrong.status()).isEqualTo(409);
        assertThat(wrong.code()).isEqualTo("SLU-0502");
        assertThat(http.post("/api/v1/queues/emails/jobs/" + id + ":complete", Map.of("claim_token", token,
                "payload_text", "sent")).status()).isEqualTo(200);
        assertThat(http.post("/api/v1/queues/emails/jobs/" + id + ":ack", Map.of("claim_token", token)).code()).isEqualTo("SLU-0502");
        JsonNode run = http.get("/api/v1/queues/emails/runs/" + id).json();
        assertThat(run.path("status").asText()).isEqualTo("succeeded");
        assertThat(run.path("result_text").asText()).isEqualTo("sent");
        assertThat(http.get("/api/v1/queues/emails/runs/" + id + "/events").json().path("events").size()).isGreaterThanOrEqualTo(2);
    }

    @Test
    void aClaimLongPollsUntilAJobArrives() throws Exception {
        CompletableFuture<JsonNode> waiting = CompletableFuture.supplyAsync(() -> claim("later", 1, "20s"));
        // give the claim a moment to start waiting (if it has not, it finds the job at once: the same answer)
        org.awaitility.Awaitility.await().pollDelay(Duration.ofMillis(300)).until(() -> true);
        long enqueuedAt = System.nanoTime();
        long id = enqueue("later", Map.of("payload_text", "hello"));
        JsonNode jobs = waiting.get(15, java.util.concurrent.TimeUnit.SECONDS);
        assertThat(Duration.ofNanos(System.nanoTime() - enqueuedAt)).as("woken by the enqueue, not the deadline")
                .isLessThan(Duration.ofSeconds(10));
        assertThat(jobs).hasSize(1);
        assertThat(jobs.get(0).path("id").asLong()).isEqualTo(id);
        assertThat(jobs.get(0).path("payload_text").asText()).isEqualTo("hello");
        assertThat(claim("later", 1, "100ms")).isEmpty();
    }

    @Test
    void failedJobsGoDeadAndAreRevivedOrPurged() {
        long a = enqueue("fragile", Map.of("payload_base64", "AAEC", "max_attempts", 1));
        long b = enqueue("fragile", Map.of("payload_base64", "AAEC", "max_attempts", 1));
        for (JsonNode j : claim("fragile", 10, "1s")) {
            assertThat(http.post("/api/v1/queues/fragile/jobs/" + j.path("id").asLong() + ":fail",
                    Map.of("claim_token", j.path("claim_token").asText(), "error", "boom")).status()).isEqualTo(200);
        }
        JsonNode dead = http.get("/api/v1/queues/fragile/dead").json().path("dead");
        assertThat(dead.findValuesAsText("last_error")).allMatch(e -> e.contains("boom"));
        assertThat(dead).hasSize(2);
        assertThat(http.post("/api/v1/queues/fragile/dead:revive", Map.of("ids", List.of(a))).json().path("revived").asInt())
                .isEqualTo(1);
        assertThat(http.get("/api/v1/queues/fragile/jobs/" + a).json().path("state").asText()).isEqualTo("pending");
        assertThat(http.post("/api/v1/queues/fragile/dead:purge", Map.of("ids", List.of(b))).json().path("purged").asInt())
                .isEqualTo(1);
        assertThat(http.get("/api/v1/queues/fragile/dead").json().path("dead")).isEmpty();
    }

    @Test
    void badQueueRequests() {
        assertThat(http.post("/api/v1/queues/q/jobs", Map.of()).code()).isEqualTo("SLU-0604");
        assertThat(http.post("/api/v1/queues/q/jobs", Map.of("payload", 1, "priority", 5000)).code()).isEqualTo("SLU-0604");
        assertThat(http.post("/api/v1/queues/q/jobs", Map.of("payload", 1, "run_at", "tomorrow")).code()).isEqualTo("SLU-0604");
        assertThat(http.post("/api/v1/queues/q/jobs", Map.of("payload", 1, "after", List.of(987_654_321))).code())
                .isEqualTo("SLU-0122");
        assertThat(http.post("/api/v1/queues/q/jobs/12:explode", Map.of("claim_token", "x")).code()).isEqualTo("SLU-0604");
        assertThat(http.post("/api/v1/queues/q/jobs/12:ack", Map.of()).code()).isEqualTo("SLU-0604");
        assertThat(http.post("/api/v1/queues/q/jobs/12:ack", Map.of("claim_token", "not-a-uuid")).status()).isEqualTo(400);
        assertThat(http.post("/api/v1/queues/q/claims", Map.of("max", 1, "wait", "5m")).code()).isEqualTo("SLU-0604");
        assertThat(http.get("/api/v1/queues/q/jobs?state=flying").code()).isEqualTo("SLU-0604");
        assertThat(http.get("/api/v1/queues/q/jobs/abc").code()).isEqualTo("SLU-0604");
        assertThat(http.get("/api/v1/queues/q/jobs/42").code()).isEqualTo("SLU-0114");
        assertThat(http.get("/api/v1/queues/q/runs/42").status()).isEqualTo(404);
    }
}
