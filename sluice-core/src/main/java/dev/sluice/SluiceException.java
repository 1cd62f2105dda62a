package dev.sluice;

import java.util.Objects;

/**
 * The one exception type Sluice throws for its own errors. It carries an {@link ErrorCode}, a
 * one-line problem (specific to this occurrence), whether retrying can help, and the fix.
 * Payloads never appear in messages.
 */
public class SluiceException extends RuntimeException {
    private final ErrorCode code;
    private final String problem;

    public SluiceException(ErrorCode code, String problem) {
        this(code, problem, null);
    }

    public SluiceException(ErrorCode code, String problem, Throwable cause) {
        super(format(code, problem), cause);
        this.code = Objects.requireNonNull(code, "code");
        this.problem = problem == null ? code.title() : problem;
    }

    private static String format(ErrorCode code, String problem) {
        return (problem == null ? code.title() : problem) + " [" + code.code() + "]";
    }

    /** The catalogue code. */
    public ErrorCode code() {
        return code;
    }

    /** The problem, specific to this occurrence. */
    public String problem() {
        return problem;
    }

    /** Whether an unchanged retry can succeed. */
    public boolean retryable() {
        return code.retryable();
    }

    /** What to do about it. */
    public String fix() {
        return code.fix();
    }
}
