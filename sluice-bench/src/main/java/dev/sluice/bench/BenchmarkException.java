package dev.sluice.bench;

/** A benchmark that could not produce a trustworthy figure (a worker failed, nothing was measured, ...). */
public final class BenchmarkException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** A failure with a cause. */
    public BenchmarkException(String message, Throwable cause) {
        super(message, cause);
    }

    /** A failure without a cause. */
    public BenchmarkException(String message) {
        super(message);
    }
}
