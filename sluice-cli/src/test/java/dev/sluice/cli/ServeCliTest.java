package dev.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** {@code sluice serve}: the API and the demo workload come up, and the command stops by itself after --for. */
@SluiceTest
class ServeCliTest {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    static HttpResponse<String> get(int port, String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void serveWithTheDemoWorkload(TestDatabase db) throws Exception {
        String schema = db.freshSchemaName("cli_serve");
        int port = freePort();
        CompletableFuture<CliTest.Run> run = CompletableFuture.supplyAsync(() -> CliTest.run(db, schema, "serve", "--port",
                Integer.toString(port), "--demo", "--demo-rate", "200", "--for", "30s", "--maintenance-interval", "1s"));
        Awaitility.await().atMost(Duration.ofSeconds(60)).ignoreExceptions().until(() -> get(port, "/api/v1/health").statusCode() == 200);
        // the demo produces, consumes and dead-letters: the overview shows its stream and groups
        Awaitility.await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> {
            String o = get(port, "/api/v1/overview").body();
            return o.contains("\"demo.orders\"") && o.contains("demo.orders/shipping") && o.contains("demo.emails");
        });
        Awaitility.await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() -> assertThat(get(port, "/metrics").body())
                .containsPattern("sluice_produce_messages_total\\{stream=\"demo.orders\"} [1-9]")
                .containsPattern("sluice_deliveries_total\\{group=\"billing\",outcome=\"success\",stream=\"demo.orders\"} [1-9]"));
        assertThat(get(port, "/api/v1/openapi.json").statusCode()).isEqualTo(200);
        CliTest.Run done = run.get(90, TimeUnit.SECONDS);
        assertThat(done.exit()).as(done.err()).isZero();
        assertThat(done.out()).contains("dashboard http://127.0.0.1:" + port + "/").contains("open mode").contains("demo workload")
                .contains("stopping");
    }

    @Test
    void refusesAnOpenServerOffLoopback(TestDatabase db) {
        String schema = db.freshSchemaName("cli_serve_open");
        CliTest.Run r = CliTest.run(db, schema, "serve", "--bind", "0.0.0.0", "--port", "0", "--for", "1s");
        assertThat(r.exit()).isEqualTo(Main.FAILURE);
        assertThat(r.err()).contains("[SLU-0602]").doesNotContain("\tat ");
    }

    @Test
    void helpNamesEveryFlag() {
        CliTest.Run r = CliTest.raw("serve", "--help");
        assertThat(r.exit()).isZero();
        assertThat(r.out()).contains("--port", "--bind", "--demo", "--metrics-public", "--max-body", "--for", "--database-url");
    }
}
