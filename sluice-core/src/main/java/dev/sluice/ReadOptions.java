package dev.sluice;

import java.time.Duration;
import java.util.Objects;

/**
 * Options of one log read ({@link Stream#read(long, int, ReadOptions)}, {@link Reader#read(long, int, ReadOptions)}).
 *
 * @param maxBytes  the byte budget of one read: the payload bytes it returns stay within it, except that a
 *                  read always returns the first message when it alone exceeds the budget (so a read always
 *                  progresses); the rest comes with the next read from the last id returned (default
 *                  {@link #DEFAULT_MAX_BYTES}, 16 MiB)
 * @param fenceWait how long a read waits for older producing transactions before returning what is safe so
 *                  far (default 5 s)
 */
public record ReadOptions(long maxBytes, Duration fenceWait) {
    /** The default byte budget of one read or fetch: 16 MiB of payload. */
    public static final long DEFAULT_MAX_BYTES = 16L * 1024 * 1024;

    public ReadOptions {
        Objects.requireNonNull(fenceWait, "fenceWait");
        if (maxBytes < 1) {
            throw new SluiceException(ErrorCode.INVALID_CONFIG, "maxBytes must be at least 1 (got " + maxBytes + ")");
        }
        if (fenceWait.isNegative()) {
            throw new SluiceException(ErrorCode.INVALID_CONFIG, "fenceWait must not be negative");
        }
    }

    /** The defaults: a 16 MiB budget, a 5 s fence wait. */
    public static ReadOptions defaults() {
        return new ReadOptions(DEFAULT_MAX_BYTES, Duration.ofSeconds(5));
    }

    /** These options with another byte budget. */
    public ReadOptions withMaxBytes(long bytes) {
        return new ReadOptions(bytes, fenceWait);
    }

    /** These options with another fence wait. */
    public ReadOptions withFenceWait(Duration wait) {
        return new ReadOptions(maxBytes, wait);
    }
}
