package dev.sluice;

import java.time.Duration;
import java.util.Objects;

/**
 * What a {@link Handler} decided about a message. A handler that throws is treated as {@link #retry()}.
 */
public sealed interface Outcome permits Outcome.Success, Outcome.Retry, Outcome.Terminal, Outcome.Delay {

    /** Done: no row is written; the group's cursor passes the message. */
    static Outcome success() {
        return Success.INSTANCE;
    }

    /**
     * Failed, try again after the group's backoff; counts an attempt (dead after {@code maxAttempts}). A
     * delivery whose lease expired before its handler finished counts as an attempt too.
     */
    static Outcome retry() {
        return new Retry(null, null);
    }

    /** Failed, try again after {@code after} (instead of the backoff); counts an attempt. */
    static Outcome retry(Duration after) {
        return new Retry(requirePositive(after), null);
    }

    /**
     * Failed for good: a dead letter at once, with the reason. The reason (like a thrown error's text and
     * stack trace) is stored cleaned: NUL, other control characters (not tab or line breaks) and lone
     * surrogates become U+FFFD, and it is cut to 16,000 characters.
     */
    static Outcome terminal(String reason) {
        return new Terminal(Objects.requireNonNull(reason, "reason"));
    }

    /** Not now: run again after {@code after}; counted in {@code delays}, not in attempts. */
    static Outcome delay(Duration after) {
        return new Delay(requirePositive(after));
    }

    private static Duration requirePositive(Duration d) {
        Objects.requireNonNull(d, "duration");
        if (d.isNegative()) {
            throw new SluiceException(ErrorCode.INVALID_OPTIONS, "an outcome's duration must not be negative");
        }
        return d;
    }

    /** See {@link Outcome#success()}. */
    enum Success implements Outcome {
        INSTANCE
    }

    /** See {@link Outcome#retry()}; {@code after} null means the group's backoff; {@code error} is what was thrown. */
    record Retry(Duration after, Throwable error) implements Outcome {
    }

    /** See {@link Outcome#terminal(String)}. */
    record Terminal(String reason) implements Outcome {
    }

    /** See {@link Outcome#delay(Duration)}. */
    record Delay(Duration after) implements Outcome {
    }
}
