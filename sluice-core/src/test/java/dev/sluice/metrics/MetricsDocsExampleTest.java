package dev.sluice.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.Consumption;
import dev.sluice.Outcome;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** The example of docs/metrics.md, kept compiling and passing (short intervals so it runs in a moment). */
@SluiceTest
class MetricsDocsExampleTest {
    @Test
    void metricsPageExampleRuns(TestDatabase db) {
        DataSource ds = db.dataSource();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (Sluice sluice = Sluice.builder().dataSource(ds).schema(db.schema())
                .meterRegistry(registry)
                .meterRefresh(Duration.ofMillis(100))
                .maintenanceInterval(Duration.ofMillis(100))
                .build()) {
            sluice.stream("orders").register();
            sluice.stream("orders", String.class).consumerGroup("billing").register();
            try (Producer<String> producer = sluice.stream("orders", String.class).producer()) {
                producer.produce("o-1");
                producer.produce("o-2");
            }
            try (Consumption c = sluice.stream("orders", String.class).consumerGroup("billing")
                    .consume(m -> m.payload().equals("o-2") ? Outcome.terminal("refused") : Outcome.success())) {
                await().atMost(Duration.ofSeconds(10)).until(() -> c.stats().succeeded() + c.stats().dead() == 2);
                assertThat(registry.get("sluice.deliveries").tags("stream", "orders", "group", "billing", "outcome", "success")
                        .counter().count()).isEqualTo(1.0);
                assertThat(registry.get("sluice.handler").tags("stream", "orders", "group", "billing").timer().count())
                        .isEqualTo(2);
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                Gauge dead = registry.find("sluice.dead.letters").tags("stream", "orders", "group", "billing").gauge();
                return dead != null && dead.value() == 1.0;
            });
        }
    }
}
