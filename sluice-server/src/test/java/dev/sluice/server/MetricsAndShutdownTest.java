package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** /metrics after traffic; a server that stops with claims out loses nothing (they are delivered again). */
@SluiceTest
class MetricsAndShutdownTest {

    @Test
    void metricsArePresentAfterTraffic(TestDatabase db) {
        try (ServerFixture f = new ServerFixture(db)) {
            Http http = f.http();
            http.put("/api/v1/streams/metered", Map.of());
            http.put("/api/v1/streams/metered/groups/g", Map.of());
            for (int i = 0; i < 5; i++) {
                http.postBytes("/api/v1/streams/metered/messages", ("m" + i).getBytes(StandardCharsets.UTF_8), Map.of());
            }
            JsonNode c = http.post("/api/v1/streams/metered/groups/g/claims", Map.of("max", 10, "wait", "5s")).json();
            List<Map<String, Object>> outcomes = new ArrayList<>();
            c.path("messages").forEach(m -> outcomes.add(Map.of("id", m.path("id").asLong(), "outcome", "success")));
            http.post("/api/v1/streams/metered/groups/g/claims/" + c.path("claim").asText() + "/outcomes", Map.of("outcomes", outcomes));
            http.post("/api/v1/queues/mq/jobs", Map.of("payload", 1));
            f.sluice.maintenance().runOnce(); // the snapshots the gauges read (the manager's pass, taken now)
            Awaitility.await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                String text = http.get("/metrics").body();
                assertThat(text).contains("sluice_produce_messages_total{stream=\"metered\"} 5.0");
                assertThat(text).contains("sluice_deliveries_total{", "group=\"g\"", "outcome=\"success\"");
                assertThat(text).contains("sluice_handler_seconds_count{");
                assertThat(text).contains("sluice_http_requests_seconds_count{");
                assertThat(text).contains("sluice_consumer_lag_messages{");
                assertThat(text).contains("sluice_queue_jobs{");
                assertThat(text).contains("sluice_dead_letters{");
            });
        }
    }

    @Test
    void stoppingWithClaimsOutLosesNothing(TestDatabase db) {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).meterRegistry(registry).build()) {
            sluice.stream("drained").register();
            sluice.stream("drained").consumerGroup("g").register();
            try (var p = sluice.stream("drained", String.class).producer()) {
                for (int i = 0; i < 20; i++) {
                    p.produce("m" + i, dev.sluice.ProduceOptions.NONE);
                }
            }
            Set<Long> resolved = new HashSet<>();
            SluiceServer first = SluiceServer.builder(sluice).port(0).drain(Duration.ofMillis(200)).start();
            Http h1 = new Http(first.url(), null);
            JsonNode c = h1.post("/api/v1/streams/drained/groups/g/claims", Map.of("max", 20, "wait", "5s")).json();
            assertThat(c.path("messages").size()).isPositive();
            // resolve half, then stop with the other half out
            List<Map<String, Object>> half = new ArrayList<>();
            JsonNode ms = c.path("messages");
            for (int i = 0; i < ms.size() / 2; i++) {
                long id = ms.get(i).path("id").asLong();
                half.add(Map.of("id", id, "outcome", "success"));
                resolved.add(id);
            }
            h1.post("/api/v1/streams/drained/groups/g/claims/" + c.path("claim").asText() + "/outcomes", Map.of("outcomes", half));
            first.close();
            try (SluiceServer second = SluiceServer.builder(sluice).port(0).start()) {
                Http h2 = new Http(second.url(), null);
                Set<Long> seenAfter = new HashSet<>();
                Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> {
                    JsonNode c2 = h2.post("/api/v1/streams/drained/groups/g/claims", Map.of("max", 20, "wait", "2s")).json();
                    List<Map<String, Object>> ok = new ArrayList<>();
                    c2.path("messages").forEach(m -> {
                        seenAfter.add(m.path("id").asLong());
                        ok.add(Map.of("id", m.path("id").asLong(), "outcome", "success"));
                    });
                    if (!ok.isEmpty()) {
                        h2.post("/api/v1/streams/drained/groups/g/claims/" + c2.path("claim").asText() + "/outcomes",
                                Map.of("outcomes", ok));
                    }
                    return resolved.size() + seenAfter.size() >= 20;
                });
                assertThat(seenAfter).doesNotContainAnyElementsOf(resolved);
                Awaitility.await().atMost(Duration.ofSeconds(30))
                        .until(() -> sluice.stream("drained").consumerGroup("g").get().orElseThrow().lag() == 0);
                // released on stop, not failed: no attempt was counted, nothing is dead
                assertThat(sluice.stream("drained").consumerGroup("g").get().orElseThrow().dead()).isZero();
            }
        }
    }
}
