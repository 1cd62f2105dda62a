package dev.sluice.internal.tracing;

import dev.sluice.Outcome;
import dev.sluice.internal.metrics.JobOutcome;
import dev.sluice.internal.text.Headers;
import java.util.Map;

/** The tracing of a client without OpenTelemetry: the headers as given, and spans that do nothing. */
public enum NoTracing implements Tracing, ProcessSpans, ProcessSpan, ProcessSpan.Entered {
    /** The one instance. */
    INSTANCE;

    @Override
    public String encodeHeaders(Map<String, String> headers) {
        return Headers.encode(headers);
    }

    @Override
    public ProcessSpans consumer(String stream, String group) {
        return this;
    }

    @Override
    public ProcessSpans worker(String queue) {
        return this;
    }

    @Override
    public ProcessSpan start(long id, int attempt, Map<String, String> headers) {
        return this;
    }

    @Override
    public Entered enter() {
        return this;
    }

    @Override
    public void thrown(Throwable error) {
        // not traced
    }

    @Override
    public void delivered(Outcome outcome, boolean lastAttempt) {
        // not traced
    }

    @Override
    public void jobEnded(JobOutcome outcome) {
        // not traced
    }

    @Override
    public void close() {
        // nothing was made current
    }
}
