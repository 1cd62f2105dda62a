package dev.sluice.internal.tracing;

import dev.sluice.SpanRelation;
import java.util.Map;

/**
 * The tracing of one client (docs/tracing.md). Names no OpenTelemetry type: a client built without one holds
 * {@link NoTracing} and never loads an OpenTelemetry class. Consumptions and workers ask once, when they are built,
 * for the spans of their stream and group or queue, so a delivery only starts and ends its span.
 */
public interface Tracing {
    /**
     * The tracing of a client: {@link NoTracing} without an OpenTelemetry, otherwise spans and propagation through it.
     *
     * @param openTelemetry null, or an {@code io.opentelemetry.api.OpenTelemetry} (kept as Object by the builder so
     *                      that no OpenTelemetry class is loaded without one)
     * @param relation      how a handler's span relates to the producer's context
     */
    static Tracing of(Object openTelemetry, SpanRelation relation) {
        return openTelemetry == null ? NoTracing.INSTANCE : OtelTracing.of(openTelemetry, relation);
    }

    /**
     * Validates and encodes a message's or job's headers ({@link dev.sluice.internal.text.Headers#encode}), with the
     * caller's trace context added when the calling thread has a current span. Called on the producing thread.
     *
     * @throws dev.sluice.SluiceException what {@code Headers.encode} throws for the caller's own headers (the added
     *                                    ones never make a produce fail: headers at the limits are written without them)
     */
    String encodeHeaders(Map<String, String> headers);

    /** The spans of deliveries to {@code group} of {@code stream}. */
    ProcessSpans consumer(String stream, String group);

    /** The spans of job attempts of {@code queue}. */
    ProcessSpans worker(String queue);
}
