package dev.sluice.tracing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.ConsumeOptions;
import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.EnqueueOptions;
import dev.sluice.GroupConfig;
import dev.sluice.Message;
import dev.sluice.Outcome;
import dev.sluice.ProduceOptions;
import dev.sluice.Producer;
import dev.sluice.Queue;
import dev.sluice.QueueOptions;
import dev.sluice.RetryPolicy;
import dev.sluice.Sluice;
import dev.sluice.SpanRelation;
import dev.sluice.WorkOptions;
import dev.sluice.Worker;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.internal.consume.AsyncHandler;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.context.propagation.TextMapSetter;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Tracing through a real OpenTelemetry SDK (docs/tracing.md): the producer's context travels in the headers and the
 * handler's span continues it (CHILD) or links to it (LINK), with the messaging attributes and the outcome; hostile
 * or missing trace headers start a new trace and never stop a delivery.
 */
@SluiceTest
class TracingTest {
    static final InMemorySpanExporter SPANS = InMemorySpanExporter.create();
    static OpenTelemetrySdk otel;
    static Tracer app;
    /** The default relation: one trace spans producer and consumer. */
    static Sluice sluice;
    /** Consumer spans start new traces linked to the producer's. */
    static Sluice linking;
    static final ConsumeOptions FAST = ConsumeOptions.defaults().withPollInterval(Duration.ofMillis(20))
            .withIdleCheck(Duration.ofMillis(200));
    static final WorkOptions QUICK = WorkOptions.defaults().withPollInterval(Duration.ofMillis(50))
            .withIdleCheck(Duration.ofMillis(200));

    static final AttributeKey<String> SYSTEM = AttributeKey.stringKey("messaging.system");
    static final AttributeKey<String> OPERATION_TYPE = AttributeKey.stringKey("messaging.operation.type");
    static final AttributeKey<String> OPERATION_NAME = AttributeKey.stringKey("messaging.operation.name");
    static final AttributeKey<String> DESTINATION = AttributeKey.stringKey("messaging.destination.name");
    static final AttributeKey<String> GROUP = AttributeKey.stringKey("messaging.consumer.group.name");
    static final AttributeKey<String> MESSAGE_ID = AttributeKey.stringKey("messaging.message.id");
    static final AttributeKey<String> KIND = AttributeKey.stringKey("sluice.destination.kind");
    static final AttributeKey<Long> ATTEMPT = AttributeKey.longKey("sluice.attempt");
    static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("sluice.outcome");
    static final AttributeKey<String> EXCEPTION_TYPE = AttributeKey.stringKey("exception.type");

    @BeforeAll
    static void setUp(TestDatabase db) {
        otel = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(SPANS)).build())
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
                .build();
        app = otel.getTracer("test-app");
        sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).openTelemetry(otel).build();
        linking = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).openTelemetry(otel)
                .consumerSpans(SpanRelation.LINK).build();
        sluice.system().register();
    }

    @AfterAll
    static void tearDown() {
        sluice.close();
        linking.close();
        otel.close();
    }

    /** The finished spans named {@code name}, oldest first. */
    private static List<SpanData> spans(String name) {
        return SPANS.getFinishedSpanItems().stream().filter(s -> s.getName().equals(name)).toList();
    }

    private static SpanData awaitSpan(String name) {
        await().atMost(Duration.ofSeconds(20)).until(() -> spans(name).size() == 1);
        return spans(name).get(0);
    }

    /** Runs {@code work} in a fresh application span (ended afterwards) and returns that span's context. */
    private static SpanContext inSpan(String name, Runnable work) {
        Span span = app.spanBuilder(name).startSpan();
        try (Scope ignored = span.makeCurrent()) {
            work.run();
        } finally {
            span.end();
        }
        return span.getSpanContext();
    }

    private static ConsumerGroup<String> group(String stream, GroupConfig config) {
        sluice.stream(stream).register();
        ConsumerGroup<String> g = sluice.stream(stream, String.class).consumerGroup("g");
        g.register(config);
        return g;
    }

    private static long produce(String stream, ProduceOptions options) {
        try (Producer<String> p = sluice.stream(stream, String.class).producer()) {
            return p.produce("payload", options).id();
        }
    }

    /** Consumes until {@code n} handler calls finished, and returns the messages they saw. */
    private static List<Message<String>> consume(ConsumerGroup<String> g, int n, dev.sluice.Handler<String> handler) {
        List<Message<String>> seen = new CopyOnWriteArrayList<>();
        try (Consumption c = g.consume(m -> {
            seen.add(m);
            return handler.handle(m);
        }, FAST)) {
            await().atMost(Duration.ofSeconds(20)).until(() -> c.stats().succeeded() + c.stats().retried()
                    + c.stats().dead() == n);
        }
        return seen;
    }

    @Test
    void oneTraceSpansTheProducerAndTheConsumerOfAStream() {
        ConsumerGroup<String> g = group("t.child", GroupConfig.defaults());
        long[] id = new long[1];
        SpanContext producer = inSpan("request", () -> id[0] = produce("t.child", ProduceOptions.NONE));
        AtomicReference<SpanContext> inHandler = new AtomicReference<>();
        List<Message<String>> seen = consume(g, 1, m -> {
            inHandler.set(Span.current().getSpanContext());
            return Outcome.success();
        });
        SpanData span = awaitSpan("process t.child");

        // The flags are the SDK's (sampled, and the random-trace-id flag of trace context level 2).
        assertThat(seen.get(0).headers().get("traceparent"))
                .startsWith("00-" + producer.getTraceId() + "-" + producer.getSpanId() + "-");
        assertThat(span.getKind()).isEqualTo(SpanKind.CONSUMER);
        assertThat(span.getTraceId()).isEqualTo(producer.getTraceId());
        assertThat(span.getParentSpanId()).isEqualTo(producer.getSpanId());
        assertThat(span.getParentSpanContext().isRemote()).isTrue();
        assertThat(span.getInstrumentationScopeInfo().getName()).isEqualTo("dev.sluice");
        assertThat(span.getAttributes().get(SYSTEM)).isEqualTo("sluice");
        assertThat(span.getAttributes().get(OPERATION_TYPE)).isEqualTo("process");
        assertThat(span.getAttributes().get(OPERATION_NAME)).isEqualTo("process");
        assertThat(span.getAttributes().get(DESTINATION)).isEqualTo("t.child");
        assertThat(span.getAttributes().get(KIND)).isEqualTo("stream");
        assertThat(span.getAttributes().get(GROUP)).isEqualTo("g");
        assertThat(span.getAttributes().get(MESSAGE_ID)).isEqualTo(Long.toString(id[0]));
        assertThat(span.getAttributes().get(ATTEMPT)).isEqualTo(1L);
        assertThat(span.getAttributes().get(OUTCOME)).isEqualTo("success");
        assertThat(span.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
        // Current while the handler ran: what the handler produces continues this span.
        assertThat(inHandler.get().getSpanId()).isEqualTo(span.getSpanId());
    }

    @Test
    void aHandlerThatProducesContinuesTheTrace() {
        ConsumerGroup<String> first = group("t.hop1", GroupConfig.defaults());
        ConsumerGroup<String> second = group("t.hop2", GroupConfig.defaults());
        SpanContext producer = inSpan("request", () -> produce("t.hop1", ProduceOptions.NONE));
        consume(first, 1, m -> {
            produce("t.hop2", ProduceOptions.NONE);
            return Outcome.success();
        });
        consume(second, 1, m -> Outcome.success());
        SpanData hop1 = awaitSpan("process t.hop1");
        SpanData hop2 = awaitSpan("process t.hop2");
        assertThat(hop2.getTraceId()).isEqualTo(producer.getTraceId());
        assertThat(hop2.getParentSpanId()).isEqualTo(hop1.getSpanId());
    }

    @Test
    void oneTraceSpansTheEnqueuerAndTheWorkerOfAQueue() {
        Queue<String> q = sluice.queue("t-jobs", String.class);
        long[] id = new long[1];
        SpanContext producer = inSpan("request", () -> id[0] = q.enqueue("job"));
        AtomicReference<Map<String, String>> headers = new AtomicReference<>();
        AtomicReference<SpanContext> inHandler = new AtomicReference<>();
        try (Worker w = q.work(job -> {
            headers.set(job.headers());
            inHandler.set(Span.current().getSpanContext());
        }, QUICK)) {
            SpanData span = awaitSpan("process t-jobs");
            assertThat(headers.get().get("traceparent")).contains(producer.getTraceId()).contains(producer.getSpanId());
            assertThat(span.getKind()).isEqualTo(SpanKind.CONSUMER);
            assertThat(span.getTraceId()).isEqualTo(producer.getTraceId());
            assertThat(span.getParentSpanId()).isEqualTo(producer.getSpanId());
            assertThat(span.getAttributes().get(SYSTEM)).isEqualTo("sluice");
            assertThat(span.getAttributes().get(OPERATION_TYPE)).isEqualTo("process");
            assertThat(span.getAttributes().get(DESTINATION)).isEqualTo("t-jobs");
            assertThat(span.getAttributes().get(KIND)).isEqualTo("queue");
            assertThat(span.getAttributes().get(GROUP)).isNull();
            assertThat(span.getAttributes().get(MESSAGE_ID)).isEqualTo(Long.toString(id[0]));
            assertThat(span.getAttributes().get(ATTEMPT)).isEqualTo(1L);
            assertThat(span.getAttributes().get(OUTCOME)).isEqualTo("ack");
            assertThat(span.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
            assertThat(inHandler.get().getSpanId()).isEqualTo(span.getSpanId());
        }
    }

    @Test
    void linkModeStartsANewTraceLinkedToTheProducersSpan() {
        linking.stream("t.link").register();
        ConsumerGroup<String> g = linking.stream("t.link", String.class).consumerGroup("g");
        g.register();
        SpanContext producer = inSpan("request", () -> produce("t.link", ProduceOptions.NONE));
        consume(g, 1, m -> Outcome.success());
        SpanData span = awaitSpan("process t.link");
        assertThat(span.getTraceId()).isNotEqualTo(producer.getTraceId());
        assertThat(span.getParentSpanContext().isValid()).isFalse();
        assertThat(span.getLinks()).singleElement().satisfies(l -> {
            assertThat(l.getSpanContext().getTraceId()).isEqualTo(producer.getTraceId());
            assertThat(l.getSpanContext().getSpanId()).isEqualTo(producer.getSpanId());
        });

        Queue<String> q = linking.queue("t-link-jobs", String.class);
        SpanContext enqueuer = inSpan("request", () -> q.enqueue("job"));
        try (Worker w = q.work(job -> { }, QUICK)) {
            SpanData job = awaitSpan("process t-link-jobs");
            assertThat(job.getTraceId()).isNotEqualTo(enqueuer.getTraceId());
            assertThat(job.getLinks()).singleElement()
                    .satisfies(l -> assertThat(l.getSpanContext().getSpanId()).isEqualTo(enqueuer.getSpanId()));
        }
    }

    @Test
    void withoutACurrentSpanNoTraceHeadersAreWrittenAndTheConsumerStartsATrace() {
        ConsumerGroup<String> g = group("t.nospan", GroupConfig.defaults());
        produce("t.nospan", ProduceOptions.builder().header("tenant", "acme").build());
        List<Message<String>> seen = consume(g, 1, m -> Outcome.success());
        assertThat(seen.get(0).headers()).containsExactly(Map.entry("tenant", "acme"));
        SpanData span = awaitSpan("process t.nospan");
        assertThat(span.getParentSpanContext().isValid()).isFalse();
        assertThat(span.getLinks()).isEmpty();

        Queue<String> q = sluice.queue("t-nospan-jobs", String.class);
        long id = q.enqueue("job");
        assertThat(q.job(id).orElseThrow().headers()).isEmpty();
    }

    @Test
    void aTraceparentTheCallerSetIsKept() {
        ConsumerGroup<String> g = group("t.own", GroupConfig.defaults());
        String own = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        inSpan("request", () -> produce("t.own", ProduceOptions.builder().header("traceparent", own).build()));
        List<Message<String>> seen = consume(g, 1, m -> Outcome.success());
        assertThat(seen.get(0).headers()).containsExactly(Map.entry("traceparent", own)); // no tracestate of ours either
        SpanData span = awaitSpan("process t.own");
        assertThat(span.getTraceId()).isEqualTo("0af7651916cd43dd8448eb211c80319c");
        assertThat(span.getParentSpanId()).isEqualTo("b7ad6b7169203331");

        Queue<String> q = sluice.queue("t-own-jobs", String.class);
        long[] id = new long[1];
        inSpan("request", () -> id[0] = q.enqueue("job", EnqueueOptions.builder().header("traceparent", own).build()));
        assertThat(q.job(id[0]).orElseThrow().headers()).containsExactly(Map.entry("traceparent", own));
    }

    @Test
    void headersAtTheirLimitAreWrittenWithoutTheTraceContextAndTheProduceSucceeds() {
        ConsumerGroup<String> g = group("t.full", GroupConfig.defaults());
        Map<String, String> full = new LinkedHashMap<>();
        for (int i = 0; i < dev.sluice.internal.text.Headers.MAX_HEADERS; i++) {
            full.put("h" + i, "v");
        }
        inSpan("request", () -> produce("t.full", ProduceOptions.builder().headers(full).build()));
        List<Message<String>> seen = consume(g, 1, m -> Outcome.success());
        assertThat(seen.get(0).headers()).isEqualTo(full);
    }

    @Test
    void aMalformedTraceparentStartsANewTraceAndTheMessageIsStillDelivered() {
        ConsumerGroup<String> g = group("t.hostile", GroupConfig.defaults());
        List<String> hostile = List.of("garbage", "00-00000000000000000000000000000000-b7ad6b7169203331-01",
                "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
                "00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01", "", "00-" + "a".repeat(4000));
        for (String h : hostile) {
            produce("t.hostile", ProduceOptions.builder().header("traceparent", h).header("tracestate", "=,=;\u0001").build());
        }
        List<Message<String>> seen = consume(g, hostile.size(), m -> Outcome.success());
        assertThat(seen).hasSize(hostile.size());
        await().atMost(Duration.ofSeconds(20)).until(() -> spans("process t.hostile").size() == hostile.size());
        assertThat(spans("process t.hostile")).allSatisfy(s -> {
            assertThat(s.getParentSpanContext().isValid()).isFalse();
            assertThat(s.getAttributes().get(OUTCOME)).isEqualTo("success");
        });
    }

    @Test
    void aHandlerExceptionIsAnErrorSpanWithItsEventAndEachAttemptHasItsOwnSpan() {
        ConsumerGroup<String> g = group("t.fails", GroupConfig.builder().retry(RetryPolicy.DEFAULT.withMaxAttempts(2)
                .withBackoff(Duration.ofMillis(10), 2.0, Duration.ofMillis(20)).withJitter(0)).build());
        SpanContext producer = inSpan("request", () -> produce("t.fails", ProduceOptions.NONE));
        consume(g, 2, m -> {
            throw new IllegalStateException("boom " + m.attempt());
        });
        await().atMost(Duration.ofSeconds(20)).until(() -> spans("process t.fails").size() == 2);
        List<SpanData> attempts = spans("process t.fails");
        assertThat(attempts).extracting(s -> s.getAttributes().get(ATTEMPT)).containsExactly(1L, 2L);
        assertThat(attempts).extracting(s -> s.getAttributes().get(OUTCOME)).containsExactly("retry", "terminal");
        assertThat(attempts).allSatisfy(s -> {
            assertThat(s.getTraceId()).isEqualTo(producer.getTraceId());
            assertThat(s.getParentSpanId()).isEqualTo(producer.getSpanId());
            assertThat(s.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
            assertThat(s.getEvents()).anySatisfy(e -> {
                assertThat(e.getName()).isEqualTo("exception");
                assertThat(e.getAttributes().get(EXCEPTION_TYPE)).isEqualTo(IllegalStateException.class.getName());
            });
        });
    }

    @Test
    void aTerminalOutcomeIsAnErrorSpanWithoutAnException() {
        ConsumerGroup<String> g = group("t.terminal", GroupConfig.defaults());
        produce("t.terminal", ProduceOptions.NONE);
        consume(g, 1, m -> Outcome.terminal("refused"));
        SpanData span = awaitSpan("process t.terminal");
        assertThat(span.getAttributes().get(OUTCOME)).isEqualTo("terminal");
        assertThat(span.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
        assertThat(span.getEvents()).isEmpty();
    }

    @Test
    void aRetriedJobHasOneSpanPerAttempt() {
        Queue<String> q = sluice.queue("t-retry-jobs", String.class, QueueOptions.builder().maxAttempts(3)
                .backoffBase(Duration.ofMillis(10)).maxBackoff(Duration.ofMillis(20)).build());
        SpanContext producer = inSpan("request", () -> q.enqueue("job"));
        try (Worker w = q.work(job -> {
            if (job.attempt() == 1) {
                throw new IllegalStateException("first attempt fails");
            }
        }, QUICK)) {
            await().atMost(Duration.ofSeconds(20)).until(() -> spans("process t-retry-jobs").size() == 2);
        }
        List<SpanData> attempts = spans("process t-retry-jobs");
        assertThat(attempts).extracting(s -> s.getAttributes().get(ATTEMPT)).containsExactly(1L, 2L);
        assertThat(attempts).extracting(s -> s.getAttributes().get(OUTCOME)).containsExactly("fail", "ack");
        assertThat(attempts).extracting(s -> s.getStatus().getStatusCode()).containsExactly(StatusCode.ERROR, StatusCode.UNSET);
        assertThat(attempts.get(0).getEvents()).extracting(e -> e.getAttributes().get(EXCEPTION_TYPE))
                .containsExactly(IllegalStateException.class.getName());
        assertThat(attempts).allSatisfy(s -> assertThat(s.getParentSpanId()).isEqualTo(producer.getSpanId()));
    }

    @Test
    void anAsyncHandlersSpanEndsWhenItsOutcomeArrives() {
        ConsumerGroup<String> g = group("t.async", GroupConfig.defaults());
        SpanContext producer = inSpan("request", () -> produce("t.async", ProduceOptions.NONE));
        CompletableFuture<Outcome> outcome = new CompletableFuture<>();
        AtomicReference<SpanContext> inStart = new AtomicReference<>();
        AsyncHandler<String> handler = m -> {
            inStart.set(Span.current().getSpanContext());
            return outcome;
        };
        try (Consumption c = g.consume(handler, FAST)) {
            await().atMost(Duration.ofSeconds(20)).until(() -> inStart.get() != null);
            assertThat(spans("process t.async")).as("ended before the outcome arrived").isEmpty();
            outcome.complete(Outcome.success());
            SpanData span = awaitSpan("process t.async");
            assertThat(span.getSpanId()).isEqualTo(inStart.get().getSpanId());
            assertThat(span.getParentSpanId()).isEqualTo(producer.getSpanId());
            assertThat(span.getAttributes().get(OUTCOME)).isEqualTo("success");
            await().atMost(Duration.ofSeconds(20)).until(() -> c.stats().succeeded() == 1);
        }
    }

    @Test
    void aPropagatorThatThrowsCostsTheTraceHeadersNeverTheProduceOrTheDelivery(TestDatabase db) {
        TextMapPropagator broken = new TextMapPropagator() {
            @Override
            public java.util.Collection<String> fields() {
                return List.of("traceparent");
            }

            @Override
            public <C> void inject(io.opentelemetry.context.Context context, C carrier, TextMapSetter<C> setter) {
                throw new IllegalStateException("broken inject");
            }

            @Override
            public <C> io.opentelemetry.context.Context extract(io.opentelemetry.context.Context context, C carrier,
                                                                 TextMapGetter<C> getter) {
                throw new IllegalStateException("broken extract");
            }
        };
        InMemorySpanExporter own = InMemorySpanExporter.create(); // closing the SDK shuts its exporter down
        try (OpenTelemetrySdk brokenOtel = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(own)).build())
                .setPropagators(ContextPropagators.create(broken)).build();
             Sluice client = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).openTelemetry(brokenOtel).build()) {
            client.stream("t.broken").register();
            ConsumerGroup<String> g = client.stream("t.broken", String.class).consumerGroup("g");
            g.register();
            inSpan("request", () -> {
                try (Producer<String> p = client.stream("t.broken", String.class).producer()) {
                    p.produce("payload", ProduceOptions.builder().header("tenant", "acme").build());
                }
            });
            List<Message<String>> seen = new CopyOnWriteArrayList<>();
            try (Consumption c = g.consume(m -> {
                seen.add(m);
                return Outcome.success();
            }, FAST)) {
                await().atMost(Duration.ofSeconds(20)).until(() -> c.stats().succeeded() == 1);
            }
            assertThat(seen.get(0).headers()).containsExactly(Map.entry("tenant", "acme"));
            await().atMost(Duration.ofSeconds(20)).until(() -> own.getFinishedSpanItems().size() == 1);
            SpanData span = own.getFinishedSpanItems().get(0);
            assertThat(span.getName()).isEqualTo("process t.broken");
            assertThat(span.getParentSpanContext().isValid()).isFalse();
            assertThat(span.getAttributes().get(OUTCOME)).isEqualTo("success");
        }
    }
}
