package dev.sluice.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.Consumption;
import dev.sluice.MetricsAccess;
import dev.sluice.Outcome;
import dev.sluice.ProduceOptions;
import dev.sluice.Producer;
import dev.sluice.Queue;
import dev.sluice.QueueStats;
import dev.sluice.Sluice;
import dev.sluice.Worker;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A Prometheus scrape of a client's registry exposes every meter under its documented Prometheus name. */
@SluiceTest
class PrometheusScrapeTest {
    @Test
    void aScrapeHoldsEveryMeterUnderItsPrometheusName(TestDatabase db) {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(false)
                .meterRegistry(registry).meterRefresh(Duration.ofHours(1)).build()) {
            sluice.stream("p.orders").register();
            sluice.stream("p.orders", String.class).consumerGroup("billing").register();
            try (Producer<String> p = sluice.stream("p.orders", String.class).producer()) {
                p.produce("a", ProduceOptions.idempotent("a"));
                p.produce("a", ProduceOptions.idempotent("a"));
                p.produce("b");
            }
            AtomicInteger handled = new AtomicInteger();
            try (Consumption c = sluice.stream("p.orders", String.class).consumerGroup("billing").consume(m -> {
                handled.incrementAndGet();
                return Outcome.success();
            })) {
                await().atMost(Duration.ofSeconds(10)).until(() -> handled.get() == 2);
            }
            Queue<String> q = sluice.queue("p.mail", String.class);
            q.enqueue("hello");
            q.enqueue("dead on arrival");
            try (Worker w = q.work(job -> {
                if (job.payload().startsWith("dead")) {
                    job.terminal("refused");
                }
            })) {
                await().atMost(Duration.ofSeconds(10)).until(() -> {
                    QueueStats s = q.stats();
                    return s.pending() == 0 && s.processing() == 0 && s.dead() == 1;
                });
            }
            // One more message nobody consumed yet: lag 1.
            try (Producer<String> p = sluice.stream("p.orders", String.class).producer()) {
                p.produce("c");
            }
            MetricsAccess.refresh(sluice);

            List<String> lines = Arrays.asList(registry.scrape().split("\n"));
            assertThat(lines).contains(
                    "sluice_produce_messages_total{stream=\"p.orders\"} 3.0",
                    "sluice_produce_duplicates_total{stream=\"p.orders\"} 1.0",
                    "sluice_deliveries_total{group=\"billing\",outcome=\"success\",stream=\"p.orders\"} 2.0",
                    "sluice_deliveries_total{group=\"billing\",outcome=\"retry\",stream=\"p.orders\"} 0.0",
                    "sluice_handler_seconds_count{group=\"billing\",stream=\"p.orders\"} 2",
                    "sluice_consumer_lag_messages{group=\"billing\",stream=\"p.orders\"} 1.0",
                    "sluice_consumer_backlog_messages{group=\"billing\",stream=\"p.orders\"} 1.0",
                    "sluice_dead_letters{group=\"billing\",stream=\"p.orders\"} 0.0",
                    "sluice_queue_jobs{queue=\"p.mail\",state=\"pending\"} 0.0",
                    "sluice_queue_jobs{queue=\"p.mail\",state=\"processing\"} 0.0",
                    "sluice_queue_jobs{queue=\"p.mail\",state=\"dead\"} 1.0",
                    "sluice_jobs_total{outcome=\"ack\",queue=\"p.mail\"} 1.0",
                    "sluice_jobs_total{outcome=\"terminal\",queue=\"p.mail\"} 1.0",
                    "sluice_job_handler_seconds_count{queue=\"p.mail\"} 2",
                    // Percentile histograms: buckets up to +Inf.
                    "sluice_handler_seconds_bucket{group=\"billing\",stream=\"p.orders\",le=\"+Inf\"} 2",
                    "sluice_job_handler_seconds_bucket{queue=\"p.mail\",le=\"+Inf\"} 2");
            assertThat(lines.stream().filter(l -> l.startsWith("sluice_handler_seconds_bucket{group=\"billing\"")).count())
                    .isGreaterThan(10);
            assertThat(lines).anyMatch(l -> l.startsWith("sluice_handler_seconds_sum{group=\"billing\",stream=\"p.orders\"} "));
            assertThat(lines).anyMatch(l -> l.startsWith("sluice_job_handler_seconds_sum{queue=\"p.mail\"} "));
            // Claim timers and the batch summary: a few fixed buckets each (6 and 5, and +Inf), not a full histogram.
            assertThat(lines.stream().filter(l -> l.startsWith("sluice_claim_seconds_bucket{group=\"billing\",stream=\"p.orders\""))
                    .count()).isEqualTo(7);
            assertThat(lines.stream().filter(l -> l.startsWith("sluice_job_claim_seconds_bucket{queue=\"p.mail\""))
                    .count()).isEqualTo(7);
            assertThat(lines.stream().filter(l -> l.startsWith("sluice_produce_batch_messages_bucket{stream=\"p.orders\""))
                    .count()).isEqualTo(6);
            assertThat(lines).anyMatch(l -> l.startsWith("sluice_produce_batch_messages_count{stream=\"p.orders\"} "));
        }
    }
}
