package dev.sluice.bench;

/**
 * Latencies in microseconds, counted in log-linear buckets (exact below 128 µs, then 64 buckets per power of
 * two: each bucket is at most 1.6 % wide), so that hours of deliveries take a fixed 18 KB and a quantile is
 * read without sorting. Not thread-safe: callers lock.
 */
final class LatencyHistogram {
    private static final int SUB = 64;
    private static final int MAX_EXPONENT = 40; // 2^41 µs ≈ 25 days
    private final long[] counts = new long[2 * SUB + (MAX_EXPONENT - 6) * SUB];
    private long total;

    /** Adds one latency (negative ones count as 0; beyond the last bucket, in the last one). */
    void record(long micros) {
        counts[index(Math.max(0, micros))]++;
        total++;
    }

    long count() {
        return total;
    }

    /**
     * The {@code q}-quantile (0..1) by nearest rank, in milliseconds: the middle of the bucket holding the
     * rank-th smallest latency; NaN when empty.
     */
    double quantileMs(double q) {
        if (total == 0) {
            return Double.NaN;
        }
        long rank = Math.min(total, Math.max(1, (long) Math.ceil(q * total)));
        long seen = 0;
        for (int i = 0; i < counts.length; i++) {
            seen += counts[i];
            if (seen >= rank) {
                return (lower(i) + upper(i)) / 2.0 / 1000.0;
            }
        }
        throw new IllegalStateException("unreachable");
    }

    static int index(long v) {
        if (v < 2 * SUB) {
            return (int) v;
        }
        int e = 63 - Long.numberOfLeadingZeros(v); // 7 or more
        if (e > MAX_EXPONENT) {
            return 2 * SUB + (MAX_EXPONENT - 6) * SUB - 1;
        }
        int shift = e - 6;
        return 2 * SUB + (shift - 1) * SUB + (int) ((v >> shift) - SUB);
    }

    /** The smallest value of bucket {@code i}. */
    static long lower(int i) {
        if (i < 2 * SUB) {
            return i;
        }
        int k = i - 2 * SUB;
        int shift = k / SUB + 1;
        return (long) (SUB + k % SUB) << shift;
    }

    /** The largest value of bucket {@code i}. */
    static long upper(int i) {
        if (i < 2 * SUB) {
            return i;
        }
        int shift = (i - 2 * SUB) / SUB + 1;
        return lower(i) + (1L << shift) - 1;
    }
}
