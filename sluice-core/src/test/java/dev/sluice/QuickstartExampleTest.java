package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** The README's quickstart, kept compiling and passing. */
@SluiceTest
class QuickstartExampleTest {

    @Test
    void readmeQuickstartRuns(TestDatabase db) {
        DataSource ds = db.dataSource();
        Sluice sluice = Sluice.builder().dataSource(ds).schema(db.schema()).build();

        StreamInfo orders = sluice.stream("orders").register(StreamConfig.builder()
                .retention(Duration.ofDays(7))
                .build());
        Produced p;
        try (Producer<String> producer = sluice.stream("orders", String.class).producer()) {
            p = producer.produce("{\"id\": \"o-1\"}",
                    ProduceOptions.builder().messageKey("customer-7").idempotencyKey("o-1").build());
        }
        List<StoredMessage> page = sluice.stream("orders").read(0, 100, Duration.ofSeconds(5));

        List<String> printed = new java.util.concurrent.CopyOnWriteArrayList<>();
        ConsumerGroup<String> billing = sluice.stream("orders", String.class).consumerGroup("billing");
        billing.register();
        try (Consumption c = billing.consume(m -> {
            printed.add(m.id() + " " + m.payload());
            return Outcome.success();
        })) {
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> printed.size() == 1);
        }
        assertThat(printed).containsExactly(p.id() + " {\"id\": \"o-1\"}");

        assertThat(orders.id()).isPositive();
        assertThat(p.duplicate()).isFalse();
        assertThat(page).singleElement().satisfies(m -> {
            assertThat(m.id()).isEqualTo(p.id());
            assertThat(m.messageKey()).isEqualTo("customer-7");
            assertThat(new String(m.payload(), StandardCharsets.UTF_8)).isEqualTo("{\"id\": \"o-1\"}");
        });
        sluice.close();
    }
}
