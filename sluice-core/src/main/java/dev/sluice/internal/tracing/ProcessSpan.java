package dev.sluice.internal.tracing;

import dev.sluice.Outcome;
import dev.sluice.internal.metrics.JobOutcome;

/**
 * The span of one delivery or job attempt. It is ended exactly once, by {@link #delivered} or {@link #jobEnded}; the
 * outcome is taken as the engine decided it, so the span says what the metrics count.
 */
public interface ProcessSpan {
    /** Makes the span current on this thread until the returned scope closes (while the handler runs). */
    Entered enter();

    /** Records what the handler threw (an exception event, status error). */
    void thrown(Throwable error);

    /**
     * Ends a delivery's span with the handler's outcome.
     *
     * @param lastAttempt whether a retry would make a dead letter (the attempt reached the policy's attempts)
     */
    void delivered(Outcome outcome, boolean lastAttempt);

    /** Ends a job attempt's span; {@code outcome} null: the handler returned unresolved and the worker acks it. */
    void jobEnded(JobOutcome outcome);

    /** A span made current; closing restores what was current before. */
    interface Entered extends AutoCloseable {
        @Override
        void close();
    }
}
