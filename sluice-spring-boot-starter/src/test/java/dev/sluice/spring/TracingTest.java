package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.Sluice;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The application's OpenTelemetry bean reaches the client: a message produced under the request's span is handled
 * by a {@code @SluiceListener} in a CONSUMER span of the same trace, a child of that span, and the listener runs with
 * its span current; a job enqueued there continues the trace.
 */
@SpringBootTest(classes = TracingTest.App.class)
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class TracingTest {
    static final InMemorySpanExporter SPANS = InMemorySpanExporter.create();

    @DynamicPropertySource
    static void db(DynamicPropertyRegistry registry) {
        TestDb.register(registry, "tracing");
    }

    /** What the listener and job saw as their current span. */
    static class Traced {
        final List<SpanContext> listener = new CopyOnWriteArrayList<>();
        final List<SpanContext> job = new CopyOnWriteArrayList<>();
        final Sluice sluice;

        Traced(Sluice sluice) {
            this.sluice = sluice;
        }

        @SluiceListener(stream = "traced-orders", group = "billing")
        void onOrder(String order) {
            listener.add(Span.current().getSpanContext());
            sluice.queue("traced-mail", String.class).enqueue("mail for " + order);
        }

        @SluiceJob(queue = "traced-mail")
        void mail(String text) {
            job.add(Span.current().getSpanContext());
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @Bean
        OpenTelemetry openTelemetry() {
            return OpenTelemetrySdk.builder()
                    .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(SPANS)).build())
                    .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance())).build();
        }

        @Bean
        Traced traced(Sluice sluice) {
            return new Traced(sluice);
        }
    }

    @Autowired
    Sluice sluice;
    @Autowired
    Traced traced;
    @Autowired
    OpenTelemetry otel;

    @Test
    void oneTraceSpansTheRequestTheListenerAndTheJob() {
        Span request = otel.getTracer("test").spanBuilder("POST /orders").setSpanKind(SpanKind.SERVER).startSpan();
        try (Scope ignored = request.makeCurrent()) {
            sluice.stream("traced-orders", String.class).producer().produce("o-1");
        } finally {
            request.end();
        }
        String trace = request.getSpanContext().getTraceId();
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            assertThat(traced.job).hasSize(1);
            assertThat(SPANS.getFinishedSpanItems()).anyMatch(s -> s.getName().equals("process traced-mail"));
        });
        SpanData process = SPANS.getFinishedSpanItems().stream().filter(s -> s.getName().equals("process traced-orders"))
                .findFirst().orElseThrow();
        assertThat(process.getKind()).isEqualTo(SpanKind.CONSUMER);
        assertThat(process.getTraceId()).isEqualTo(trace);
        assertThat(process.getParentSpanId()).isEqualTo(request.getSpanContext().getSpanId());
        assertThat(process.getAttributes().get(AttributeKey.stringKey("messaging.system"))).isEqualTo("sluice");
        assertThat(process.getAttributes().get(AttributeKey.stringKey("messaging.consumer.group.name"))).isEqualTo("billing");
        assertThat(traced.listener).singleElement().satisfies(c -> assertThat(c.getSpanId()).isEqualTo(process.getSpanId()));

        SpanData mail = SPANS.getFinishedSpanItems().stream().filter(s -> s.getName().equals("process traced-mail"))
                .findFirst().orElseThrow();
        assertThat(mail.getTraceId()).as("the job the listener enqueued continues the trace").isEqualTo(trace);
        assertThat(mail.getParentSpanId()).isEqualTo(process.getSpanId());
        assertThat(traced.job).singleElement().satisfies(c -> assertThat(c.getTraceId()).isEqualTo(trace));
    }
}
