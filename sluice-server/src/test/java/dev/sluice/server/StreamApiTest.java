package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.Outcome;
import dev.sluice.embedded.test.SluiceTest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** The stream and group routes: statuses, JSON shapes, coded errors. */
@SluiceTest
class StreamApiTest extends ServerTestBase {
    @Test
    void registerGetListAndDestroyAStream() {
        Http.Reply put = http.put("/api/v1/streams/orders", Map.of("retention", "7d", "max_payload_bytes", 4096));
        assertThat(put.status()).isEqualTo(201);
        assertThat(put.json().path("name").asText()).isEqualTo("orders");
        assertThat(put.json().path("config").path("retention").asText()).isEqualTo("PT168H");
        assertThat(put.json().path("config").path("max_payload_bytes").asInt()).isEqualTo(4096);
        assertThat(http.put("/api/v1/streams/orders", Map.of("retention", "7d", "max_payload_bytes", 4096)).status()).isEqualTo(200);
        assertThat(http.get("/api/v1/streams/orders").json().path("id").asLong()).isEqualTo(put.json().path("id").asLong());
        assertThat(http.get("/api/v1/streams").json().path("streams").findValuesAsText("name")).contains("orders");

        http.put("/api/v1/streams/doomed", Map.of());
        assertThat(http.delete("/api/v1/streams/doomed").status()).isEqualTo(204);
        Http.Reply gone = http.get("/api/v1/streams/doomed");
        assertThat(gone.status()).isEqualTo(404);
        assertThat(gone.code()).isEqualTo("SLU-0100");
        assertThat(gone.json().path("error").path("name").asText()).isEqualTo("STREAM_NOT_FOUND");
        assertThat(gone.json().path("error").has("fix")).isTrue();
        assertThat(gone.json().path("error").path("retryable").isBoolean()).isTrue();
    }

    @Test
    void badConfigsAreCodedErrors() {
        Http.Reply unknown = http.put("/api/v1/streams/bad1", Map.of("retension", "7d"));
        assertThat(unknown.status()).isEqualTo(400);
        assertThat(unknown.code()).isEqualTo("SLU-0604");
        assertThat(http.put("/api/v1/streams/bad2", Map.of("retention", "forever")).code()).isEqualTo("SLU-0604");
        assertThat(http.put("/api/v1/streams/bad3", "{not json").code()).isEqualTo("SLU-0604");
        Http.Reply badName = http.put("/api/v1/streams/Bad%20Name", Map.of());
        assertThat(badName.status()).isEqualTo(400);
        assertThat(badName.code()).isEqualTo("SLU-0001");
        assertThat(http.get("/api/v1/nothing-here").code()).isEqualTo("SLU-0610");
        assertThat(http.get("/api/v1/nothing-here").status()).isEqualTo(404);
    }

    @Test
    void produceOneWithHeadersKeysAndIdempotency() {
        http.put("/api/v1/streams/events", Map.of());
        Http.Reply first = http.postBytes("/api/v1/streams/events/messages", "{\"a\":1}".getBytes(StandardCharsets.UTF_8),
                Map.of("Content-Type", "application/json", "Idempotency-Key", "evt-1", "Sluice-Message-Key", "customer-7",
                        "Sluice-Routing-Key", "eu.orders", "Sluice-Header-Trace-Id", "t-1"));
        assertThat(first.status()).isEqualTo(201);
        assertThat(first.json().path("duplicate").asBoolean()).isFalse();
        Http.Reply again = http.postBytes("/api/v1/streams/events/messages", "{\"a\":1}".getBytes(StandardCharsets.UTF_8),
                Map.of("Content-Type", "application/json", "Idempotency-Key", "evt-1"));
        assertThat(again.status()).isEqualTo(200);
        assertThat(again.json().path("duplicate").asBoolean()).isTrue();
        assertThat(again.json().path("id").asLong()).isEqualTo(first.json().path("id").asLong());

        JsonNode read = http.get("/api/v1/streams/events/messages?after=0&limit=10").json();
        JsonNode m = read.path("messages").get(0);
        assertThat(m.path("id").asLong()).isEqualTo(first.json().path("id").asLong());
        assertThat(m.path("content_type").asText()).isEqualTo("application/json");
        assertThat(m.path("message_key").asText()).isEqualTo("customer-7");
        assertThat(m.path("routing_key").asText()).isEqualTo("eu.orders");
        assertThat(m.path("headers").path("trace-id").asText()).isEqualTo("t-1");
        assertThat(m.path("payload_text").asText()).isEqualTo("{\"a\":1}");
        assertThat(read.path("next_after").asLong()).isEqualTo(m.path("id").asLong());
        assertThat(read.path("messages")).hasSize(1);

        Http.Reply badKey = http.postBytes("/api/v1/streams/events/messages", new byte[] {1},
                Map.of("Sluice-Message-Key", "x".repeat(300)));
        assertThat(badKey.status()).isEqualTo(400);
        assertThat(badKey.code()).isEqualTo("SLU-0005");
        assertThat(http.postBytes("/api/v1/streams/missing/messages", new byte[] {1}, Map.of()).code()).isEqualTo("SLU-0100");
        assertThat(http.get("/api/v1/streams/events/messages?limit=5000").code()).isEqualTo("SLU-0604");
    }

    @Test
    void batchIsAllOrNothing() {
        http.put("/api/v1/streams/batched", Map.of());
        Http.Reply ok = http.post("/api/v1/streams/batched/messages:batch", List.of(
                Map.of("payload", Map.of("n", 1), "message_key", "k1"),
                Map.of("payload", Map.of("n", 2), "idempotency_key", "b-2", "headers", Map.of("h", "v"))));
        assertThat(ok.status()).isEqualTo(201);
        assertThat(ok.json().path("messages")).hasSize(2);
        // one bad element: nothing of the batch is written
        Http.Reply bad = http.post("/api/v1/streams/batched/messages:batch", List.of(
                Map.of("payload", Map.of("n", 3)), Map.of("payload", Map.of("n", 4), "message_key", "")));
        assertThat(bad.status()).isEqualTo(400);
        assertThat(http.get("/api/v1/streams/batched/messages?after=0").json().path("messages")).hasSize(2);
        Http.Reply mixed = http.post("/api/v1/streams/batched/messages:batch", List.of(
                Map.of("payload", 1), Map.of("payload_text", "plain")));
        assertThat(mixed.code()).isEqualTo("SLU-0604");
        assertThat(http.post("/api/v1/streams/batched/messages:batch", List.of()).code()).isEqualTo("SLU-0604");
        assertThat(http.post("/api/v1/streams/batched/messages:batch", List.of(Map.of("payload", 1, "bogus", 2))).code())
                .isEqualTo("SLU-0604");
    }

    @Test
    void groupsDeadLettersRedrivePurgeAndRewind() throws Exception {
        http.put("/api/v1/streams/jobs", Map.of());
        Http.Reply g = http.put("/api/v1/streams/jobs/groups/audit", Map.of("start", "beginning", "max_attempts", 2));
        assertThat(g.status()).isEqualTo(201);
        assertThat(g.json().path("max_attempts").asInt()).isEqualTo(2);
        for (int i = 0; i < 3; i++) {
            http.postBytes("/api/v1/streams/jobs/messages", ("m" + i).getBytes(StandardCharsets.UTF_8), Map.of());
        }
        try (var c = f.sluice.stream("jobs").consumerGroup("audit").consume(m -> Outcome.terminal("bad message"))) {
            Awaitility.await().atMost(Duration.ofSeconds(30))
                    .until(() -> http.get("/api/v1/streams/jobs/groups/audit").json().path("dead").asLong() == 3);
        }
        JsonNode page = http.get("/api/v1/streams/jobs/groups/audit/dead?limit=2").json();
        assertThat(page.path("dead_letters")).hasSize(2);
        assertThat(page.path("dead_letters").get(0).path("last_error").asText()).contains("bad message");
        String cursor = page.path("next_cursor").asText();
        JsonNode rest = http.get("/api/v1/streams/jobs/groups/audit/dead?limit=2&cursor=" + cursor).json();
        assertThat(rest.path("dead_letters")).hasSize(1);
        long first = page.path("dead_letters").get(0).path("message_id").asLong();
        assertThat(http.post("/api/v1/streams/jobs/groups/audit/dead:redrive", Map.of("ids", List.of(first))).json()
                .path("redriven").asInt()).isEqualTo(1);
        assertThat(http.post("/api/v1/streams/jobs/groups/audit/dead:purge", Map.of("all", true)).json().path("purged").asInt())
                .isEqualTo(2);
        assertThat(http.post("/api/v1/streams/jobs/groups/audit/dead:purge", Map.of("all", true, "ids", List.of(1))).code())
                .isEqualTo("SLU-0604");
        assertThat(http.get("/api/v1/streams/jobs/groups").json().path("groups").findValuesAsText("name")).containsExactly("audit");

        JsonNode rewound = http.post("/api/v1/streams/jobs/groups/audit:rewind", Map.of("to_id", 1, "force", true)).json();
        assertThat(rewound.path("committed").asLong()).isZero();
        assertThat(http.post("/api/v1/streams/jobs/groups/audit:forward", Map.of()).code()).isEqualTo("SLU-0604");
        assertThat(http.get("/api/v1/streams/jobs/groups/none").code()).isEqualTo("SLU-0108");
    }
}
