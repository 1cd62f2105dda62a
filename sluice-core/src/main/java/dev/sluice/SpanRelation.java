package dev.sluice;

/**
 * How the span in which a consumer or a queue worker runs its handler relates to the producer's span whose context
 * travelled in the message's or job's headers (docs/tracing.md; set with {@link Sluice.Builder#consumerSpans}).
 */
public enum SpanRelation {
    /**
     * The handler's span is a child of the producer's span: one trace spans the producer and every consumer (the
     * default; suits request-shaped work where the trace should show what the request caused).
     */
    CHILD,
    /**
     * The handler's span starts a new trace and carries a link to the producer's span: each delivery is a trace of its
     * own (suits fan-out and long-delayed work, where one producer's trace would otherwise grow without bound).
     */
    LINK
}
