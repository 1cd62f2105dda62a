package dev.sluice.internal.tracing;

import java.util.Map;

/** The spans of one stream's group or one queue: its span name and attributes, computed once. */
public interface ProcessSpans {
    /**
     * Starts the span of one delivery or job attempt (not yet current: see {@link ProcessSpan#enter}).
     *
     * @param id      the message or job id
     * @param attempt the attempt, from 1
     * @param headers the message's or job's headers, where the producer's context is read from (hostile input:
     *                anything unreadable starts a new trace)
     */
    ProcessSpan start(long id, int attempt, Map<String, String> headers);
}
