package dev.sluice.examples.orders;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTestExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The whole app over HTTP: an order is saved, its event consumed and its email job done; a rejected order rolls back
 * with no event. Runs on the test JVM's embedded PostgreSQL (a configured URL, so the embedded fallback backs off).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class OrdersApplicationTest {
    @DynamicPropertySource
    static void db(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", SluiceTestExtension::serverUrl);
        registry.add("sluice.schema", () -> "orders_example_test");
    }

    @LocalServerPort
    int port;
    @Autowired
    JdbcTemplate jdbc;
    @Autowired
    Sluice sluice;

    private final HttpClient http = HttpClient.newHttpClient();

    private HttpResponse<String> post(String json) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/orders"))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private long events() {
        return sluice.stream("order-created").read(0, 10_000, Duration.ofSeconds(5)).size();
    }

    @Test
    void anOrderIsSavedItsEventConsumedAndItsEmailSent() throws Exception {
        HttpResponse<String> created = post("{\"email\":\"ada@example.com\",\"item\":\"widget\",\"quantity\":2}");
        assertThat(created.statusCode()).isEqualTo(201);
        String location = created.headers().firstValue("Location").orElseThrow();
        long id = Long.parseLong(location.substring(location.lastIndexOf('/') + 1));

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            HttpResponse<String> view = get("/orders/" + id);
            assertThat(view.statusCode()).isEqualTo(200);
            assertThat(view.body()).contains("\"emailSent\":true");
        });
        assertThat(jdbc.queryForObject("SELECT subject FROM sent_emails WHERE order_id = ?", String.class, id))
                .isEqualTo("Your order of 2 widget");
        assertThat(sluice.stream("order-created").consumerGroup("emails").get()).isPresent();

        HttpResponse<String> health = get("/actuator/health");
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(health.body()).contains("\"sluice\"").contains("order-created/emails");
        assertThat(get("/actuator/info").body()).contains("\"sluice\"").contains("orders_example_test");
    }

    @Test
    void aRejectedOrderRollsBackWithNoEvent() throws Exception {
        long ordersBefore = jdbc.queryForObject("SELECT count(*) FROM orders", Long.class);
        long eventsBefore = events();
        // 'gizmo' has 10 in stock: the order row and the event are written, then the reservation fails.
        HttpResponse<String> tooMany = post("{\"email\":\"bob@example.com\",\"item\":\"gizmo\",\"quantity\":500}");
        assertThat(tooMany.statusCode()).isEqualTo(422);
        assertThat(tooMany.body()).contains("not enough stock");
        HttpResponse<String> invalid = post("{\"email\":\"nobody\",\"item\":\"widget\",\"quantity\":1}");
        assertThat(invalid.statusCode()).isEqualTo(422);

        assertThat(jdbc.queryForObject("SELECT count(*) FROM orders", Long.class)).isEqualTo(ordersBefore);
        assertThat(events()).isEqualTo(eventsBefore);
        assertThat(jdbc.queryForObject("SELECT available FROM stock WHERE item = 'gizmo'", Integer.class)).isEqualTo(10);
    }
}
