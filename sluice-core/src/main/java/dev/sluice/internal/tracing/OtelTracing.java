package dev.sluice.internal.tracing;

import dev.sluice.Outcome;
import dev.sluice.SluiceException;
import dev.sluice.SpanRelation;
import dev.sluice.internal.metrics.DeliveryOutcome;
import dev.sluice.internal.metrics.JobOutcome;
import dev.sluice.internal.text.Headers;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.TracerBuilder;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.context.propagation.TextMapSetter;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The tracing of a client given an {@link OpenTelemetry} (docs/tracing.md has the headers, names and attributes).
 * Propagation goes through the instance's text-map propagator (W3C {@code traceparent}/{@code tracestate} with the
 * usual SDK setup), spans through its tracer {@code dev.sluice}. The only class that names OpenTelemetry types.
 */
final class OtelTracing implements Tracing {
    static final String INSTRUMENTATION = "dev.sluice";

    static final AttributeKey<String> SYSTEM = AttributeKey.stringKey("messaging.system");
    static final AttributeKey<String> OPERATION_TYPE = AttributeKey.stringKey("messaging.operation.type");
    static final AttributeKey<String> OPERATION_NAME = AttributeKey.stringKey("messaging.operation.name");
    static final AttributeKey<String> DESTINATION = AttributeKey.stringKey("messaging.destination.name");
    static final AttributeKey<String> GROUP = AttributeKey.stringKey("messaging.consumer.group.name");
    static final AttributeKey<String> MESSAGE_ID = AttributeKey.stringKey("messaging.message.id");
    static final AttributeKey<String> KIND = AttributeKey.stringKey("sluice.destination.kind");
    static final AttributeKey<Long> ATTEMPT = AttributeKey.longKey("sluice.attempt");
    static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("sluice.outcome");

    /** Reads header values for the propagator; a null carrier (never ours) reads as none. */
    private static final TextMapGetter<Map<String, String>> GETTER = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Map<String, String> carrier) {
            return carrier == null ? List.of() : carrier.keySet();
        }

        @Override
        public String get(Map<String, String> carrier, String key) {
            return carrier == null || key == null ? null : carrier.get(key);
        }
    };

    /** Adds what the propagator writes, keeping any header already there (the caller's own wins). */
    private static final TextMapSetter<Map<String, String>> SETTER = (carrier, key, value) -> {
        if (carrier != null && key != null && value != null) {
            carrier.putIfAbsent(key, value);
        }
    };

    private final Tracer tracer;
    private final TextMapPropagator propagator;
    /** The headers the propagator writes: when the caller set any of them, it propagates by hand and we add none. */
    private final Collection<String> fields;
    private final SpanRelation relation;

    private OtelTracing(OpenTelemetry otel, SpanRelation relation) {
        TracerBuilder b = otel.tracerBuilder(INSTRUMENTATION);
        String version = OtelTracing.class.getPackage().getImplementationVersion();
        this.tracer = (version == null ? b : b.setInstrumentationVersion(version)).build();
        this.propagator = otel.getPropagators().getTextMapPropagator();
        this.fields = List.copyOf(propagator.fields());
        this.relation = relation;
    }

    /** The tracing of {@code otel}, an {@link OpenTelemetry} (typed Object so that callers name no OpenTelemetry type). */
    static Tracing of(Object otel, SpanRelation relation) {
        return new OtelTracing((OpenTelemetry) otel, relation);
    }

    @Override
    public String encodeHeaders(Map<String, String> headers) {
        Context current = Context.current();
        if (!Span.fromContext(current).getSpanContext().isValid()) {
            return Headers.encode(headers); // nothing to continue: no trace headers at all
        }
        for (String f : fields) {
            if (headers.containsKey(f)) {
                return Headers.encode(headers); // the caller's trace context, untouched
            }
        }
        Map<String, String> with = new LinkedHashMap<>(headers);
        try {
            propagator.inject(current, with, SETTER);
        } catch (RuntimeException e) {
            return Headers.encode(headers); // a propagator's failure never fails a produce
        }
        if (with.size() == headers.size()) {
            return Headers.encode(headers);
        }
        try {
            return Headers.encode(with);
        } catch (SluiceException e) {
            // At the limits (count, bytes), or a propagator that writes what headers may not hold: the caller's
            // headers alone, which throw here if they themselves are invalid (the caller's error, as without tracing).
            return Headers.encode(headers);
        }
    }

    @Override
    public ProcessSpans consumer(String stream, String group) {
        return new Spans("process " + stream, common(stream, "stream").put(GROUP, group).build());
    }

    @Override
    public ProcessSpans worker(String queue) {
        return new Spans("process " + queue, common(queue, "queue").build());
    }

    private static AttributesBuilder common(String destination, String kind) {
        return Attributes.builder().put(SYSTEM, "sluice").put(OPERATION_TYPE, "process").put(OPERATION_NAME, "process")
                .put(DESTINATION, destination).put(KIND, kind);
    }

    /** The producer's context from the headers; the root context when they hold none or nothing readable. */
    private Context extract(Map<String, String> headers) {
        if (headers == null || headers.isEmpty()) {
            return Context.root();
        }
        try {
            return propagator.extract(Context.root(), headers, GETTER);
        } catch (RuntimeException e) {
            return Context.root(); // hostile headers start a new trace; they never stop a delivery
        }
    }

    /** The spans of one group or queue. */
    private final class Spans implements ProcessSpans {
        private final String name;
        private final Attributes attributes;

        Spans(String name, Attributes attributes) {
            this.name = name;
            this.attributes = attributes;
        }

        @Override
        public ProcessSpan start(long id, int attempt, Map<String, String> headers) {
            try {
                return startSpan(id, attempt, headers);
            } catch (RuntimeException e) {
                // The SDK never throws here, but the OpenTelemetry is the application's: a broken one costs the span,
                // never the delivery (whose bookkeeping runs after this call).
                return NoTracing.INSTANCE;
            }
        }

        private ProcessSpan startSpan(long id, int attempt, Map<String, String> headers) {
            Context producer = extract(headers);
            SpanBuilder b = tracer.spanBuilder(name).setSpanKind(SpanKind.CONSUMER).setAllAttributes(attributes)
                    .setAttribute(MESSAGE_ID, Long.toString(id)).setAttribute(ATTEMPT, (long) attempt);
            if (relation == SpanRelation.CHILD) {
                b.setParent(producer); // extracted from the root: without a valid producer span this is a new trace
            } else {
                b.setNoParent();
                SpanContext remote = Span.fromContext(producer).getSpanContext();
                if (remote.isValid()) {
                    b.addLink(remote);
                }
            }
            Span span = b.startSpan();
            // Current while the handler runs: what it produces continues this span (and keeps the producer's baggage).
            return new Attempt(span, producer.with(span));
        }
    }

    /** One delivery's or attempt's span. */
    private static final class Attempt implements ProcessSpan {
        private final Span span;
        private final Context context;
        /** Set by {@link #thrown}: its status (with the exception's type) is kept. */
        private volatile boolean failed;

        Attempt(Span span, Context context) {
            this.span = span;
            this.context = context;
        }

        @Override
        public Entered enter() {
            Scope scope = context.makeCurrent();
            return scope::close;
        }

        @Override
        public void thrown(Throwable error) {
            span.recordException(error);
            // The type only: a message may carry what the handler saw of the payload.
            span.setStatus(StatusCode.ERROR, error.getClass().getName());
            failed = true;
        }

        @Override
        public void delivered(Outcome outcome, boolean lastAttempt) {
            DeliveryOutcome o;
            boolean error;
            if (outcome instanceof Outcome.Retry r) {
                o = lastAttempt ? DeliveryOutcome.TERMINAL : DeliveryOutcome.RETRY;
                error = lastAttempt || r.error() != null;
            } else if (outcome instanceof Outcome.Terminal) {
                o = DeliveryOutcome.TERMINAL;
                error = true;
            } else if (outcome instanceof Outcome.Delay) {
                o = DeliveryOutcome.DELAY;
                error = false;
            } else {
                o = DeliveryOutcome.SUCCESS;
                error = false;
            }
            end(o.tag(), error, o == DeliveryOutcome.TERMINAL ? "dead letter" : "retry");
        }

        @Override
        public void jobEnded(JobOutcome outcome) {
            JobOutcome o = outcome == null ? JobOutcome.ACK : outcome;
            boolean error = o == JobOutcome.FAIL || o == JobOutcome.DEAD || o == JobOutcome.TERMINAL;
            end(o.tag(), error, o == JobOutcome.FAIL ? "failed attempt" : "dead job");
        }

        private void end(String outcome, boolean error, String why) {
            span.setAttribute(OUTCOME, outcome);
            if (error && !failed) {
                span.setStatus(StatusCode.ERROR, why);
            }
            span.end();
        }
    }
}
