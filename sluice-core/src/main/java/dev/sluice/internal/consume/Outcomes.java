package dev.sluice.internal.consume;

import dev.sluice.Outcome;
import dev.sluice.RetryPolicy;
import dev.sluice.internal.consume.RangeWork.OutcomeRow;
import dev.sluice.internal.jdbc.ErrorText;
import dev.sluice.internal.runtime.Backoff;
import java.time.Duration;
import java.util.function.DoubleSupplier;

/**
 * Pure code, no database: what a handler's {@link Outcome} at a given attempt turns into — the exception row to
 * write (none for a success) and the delivery event to log — plus the retry backoff with jitter and the
 * re-check pauses of deferred messages (docs/consume.md, "outcomes").
 */
final class Outcomes {
    /**
     * How long a deferred message first waits before it re-checks its key by itself (a wake-up usually
     * comes sooner, but one can race the deferral); each further deferral doubles it, up to 1 s. Row
     * claims of keyed groups take at most one row per key, so a short cap costs one re-check per key and
     * second, while a long one let a waiting row lose its key to later ones for many seconds (the lab
     * measured a redelivery 14 s after a kill with a 5 s cap).
     */
    static final double DEFER_RECHECK_SECONDS = 0.1;
    static final double DEFER_RECHECK_MAX_SECONDS = 1;

    /** What an outcome was, for the consumer's counters. */
    enum Kind {
        SUCCEEDED, DELAYED, RETRIED, DEAD
    }

    /** An outcome's result: the row to write (null for a success) and the event to log. */
    record Decision(Kind kind, OutcomeRow row, DeliveryEvent event) {
        boolean success() {
            return row == null;
        }
    }

    private final RetryPolicy retry;
    private final DoubleSupplier random;

    /** {@code random}: uniform in [0, 1), for the jitter. */
    Outcomes(RetryPolicy retry, DoubleSupplier random) {
        this.retry = retry;
        this.random = random;
    }

    /**
     * The decision for message {@code id} (key {@code key}) after delivery {@code attempt} with {@code delays}
     * delays so far. A delay does not count as an attempt; a retry past the policy's attempts is a dead letter.
     */
    Decision decide(long id, String key, Outcome out, int attempt, int delays) {
        if (out instanceof Outcome.Success) {
            return new Decision(Kind.SUCCEEDED, null, DeliveryEvent.SUCCESS);
        }
        if (out instanceof Outcome.Delay d) {
            return new Decision(Kind.DELAYED, new OutcomeRow(id, RowStatus.READY, key, attempt - 1, delays + 1,
                    seconds(d.after()), null, null), DeliveryEvent.DELAYED);
        }
        if (out instanceof Outcome.Terminal term) {
            return new Decision(Kind.DEAD, new OutcomeRow(id, RowStatus.DEAD, key, attempt, delays, 0,
                    ErrorText.clean(term.reason()), null), DeliveryEvent.DEAD);
        }
        // Cleaned here, before the row and its log event exist: a NUL would make the outcome write fail forever.
        Outcome.Retry r = (Outcome.Retry) out;
        String error = r.error() == null ? "retry requested" : ErrorText.of(r.error());
        String stack = r.error() == null ? null : ErrorText.stackTrace(r.error());
        if (attempt >= retry.maxAttempts()) {
            return new Decision(Kind.DEAD, new OutcomeRow(id, RowStatus.DEAD, key, attempt, delays, 0, error, stack),
                    DeliveryEvent.DEAD);
        }
        Duration wait = r.after() != null ? r.after() : jittered(retry.backoff(attempt));
        return new Decision(Kind.RETRIED, new OutcomeRow(id, RowStatus.READY, key, attempt, delays, seconds(wait), error, stack),
                DeliveryEvent.FAILED);
    }

    /** The row of a message of a range whose key stayed busy: deferred, the attempt not counted. */
    static OutcomeRow deferredInRange(long id, String key, int attempt) {
        return new OutcomeRow(id, RowStatus.DEFERRED, key, attempt - 1, 0, DEFER_RECHECK_SECONDS, null, null);
    }

    /** The pause before a row deferred {@code deferrals} times before re-checks its key: doubling, capped. */
    static double deferRecheckSeconds(int deferrals) {
        return Math.min(DEFER_RECHECK_MAX_SECONDS, DEFER_RECHECK_SECONDS * Math.pow(2, deferrals + 1));
    }

    /** The backoff shortened by up to the policy's jitter fraction. */
    Duration jittered(Duration d) {
        return Backoff.jittered(d, retry.jitter(), random.getAsDouble());
    }

    static double seconds(Duration d) {
        return d.toNanos() / 1e9;
    }
}
