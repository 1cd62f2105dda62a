package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.embedded.test.SluiceTest;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The OpenAPI document lists every route the server serves, and every documented path is served. */
@SluiceTest
class OpenApiTest extends ServerTestBase {
    @Test
    void everyDocumentedRouteIsServedAndCodedWhenItFails() {
        Http http = f.http();
        JsonNode doc = http.get("/api/v1/openapi.json").json();
        assertThat(doc.path("openapi").asText()).startsWith("3.");
        JsonNode paths = doc.path("paths");
        List<String> operations = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = paths.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> p = it.next();
            for (Iterator<String> m = p.getValue().fieldNames(); m.hasNext(); ) {
                String method = m.next();
                operations.add(method + " " + p.getKey());
                JsonNode op = p.getValue().path(method);
                assertThat(op.path("summary").asText()).as(method + " " + p.getKey()).isNotEmpty();
                assertThat(op.path("responses").has("default")).isTrue();
                // call it with made-up path values: never "no such route", always JSON (errors coded)
                String path = p.getKey().replaceAll("\\{[a-z]+}", "x1");
                Http.Reply r = switch (method) {
                    case "get" -> http.get(path);
                    case "put" -> http.put(path, Map.of());
                    case "delete" -> http.delete(path);
                    default -> http.post(path, Map.of());
                };
                if (r.status() >= 400 && !p.getKey().startsWith("/assets/")) {
                    assertThat(r.code()).as(method + " " + path + " -> " + r.body()).startsWith("SLU-").isNotEqualTo("SLU-0610");
                }
            }
        }
        assertThat(operations).contains("post /api/v1/streams/{stream}/messages", "post /api/v1/streams/{stream}/messages:batch",
                "post /api/v1/streams/{stream}/groups/{group}/claims", "post /api/v1/streams/{stream}/groups/{group}/claims/{claim}:renew",
                "post /api/v1/queues/{queue}/jobs/{job}:ack", "post /api/v1/queues/{queue}/dead:revive", "get /api/v1/health",
                "get /metrics", "post /api/v1/schedules/{schedule}:run");
        assertThat(operations).hasSizeGreaterThan(40);
    }
}
