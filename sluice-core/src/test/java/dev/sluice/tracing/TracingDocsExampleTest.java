package dev.sluice.tracing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.Outcome;
import dev.sluice.Producer;
import dev.sluice.Queue;
import dev.sluice.Sluice;
import dev.sluice.SpanRelation;
import dev.sluice.Worker;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
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
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** The example of docs/tracing.md, kept compiling and passing. */
@SluiceTest
class TracingDocsExampleTest {
    @Test
    void tracingPageExampleRuns(TestDatabase db) {
        DataSource ds = db.dataSource();
        InMemorySpanExporter exporter = InMemorySpanExporter.create();
        // Your application's SDK (or the agent's GlobalOpenTelemetry.get()); the page's example starts here.
        OpenTelemetry otel = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
                .build();
        Tracer tracer = otel.getTracer("shop");

        try (Sluice sluice = Sluice.builder().dataSource(ds).schema(db.schema())
                .openTelemetry(otel)                               // trace headers and handler spans
                .consumerSpans(SpanRelation.CHILD)                 // the default; LINK: a new trace linked to the producer's
                .build()) {
            sluice.stream("orders").register();
            ConsumerGroup<String> billing = sluice.stream("orders", String.class).consumerGroup("billing");
            billing.register();
            Queue<String> emails = sluice.queue("emails", String.class);

            Span request = tracer.spanBuilder("POST /orders").startSpan();
            try (Scope scope = request.makeCurrent();
                 Producer<String> producer = sluice.stream("orders", String.class).producer()) {
                producer.produce("o-1");                           // headers: traceparent of "POST /orders"
            } finally {
                request.end();
            }

            try (Consumption c = billing.consume(m -> {
                     // runs in the span "process orders", a child of "POST /orders", current here:
                     emails.enqueue("receipt for " + m.payload());  // so this job carries it on
                     return Outcome.success();
                 });
                 Worker w = emails.work(job -> { /* in "process emails", the same trace */ })) {
                await().atMost(Duration.ofSeconds(20)).until(() -> exporter.getFinishedSpanItems().stream()
                        .anyMatch(s -> s.getName().equals("process emails")));
            }

            List<SpanData> spans = exporter.getFinishedSpanItems();
            SpanData consumed = spans.stream().filter(s -> s.getName().equals("process orders")).findFirst().orElseThrow();
            SpanData job = spans.stream().filter(s -> s.getName().equals("process emails")).findFirst().orElseThrow();
            assertThat(consumed.getTraceId()).isEqualTo(request.getSpanContext().getTraceId());
            assertThat(consumed.getParentSpanId()).isEqualTo(request.getSpanContext().getSpanId());
            assertThat(job.getTraceId()).isEqualTo(request.getSpanContext().getTraceId());
            assertThat(job.getParentSpanId()).isEqualTo(consumed.getSpanId());
        }
    }
}
