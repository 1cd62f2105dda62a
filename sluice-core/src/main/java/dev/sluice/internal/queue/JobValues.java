package dev.sluice.internal.queue;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;

/**
 * Conversions between Java values and the job tables' columns and parameters: epoch microseconds (the
 * unit of {@link QueueSql#micros} and of the enqueue statements' time parameters), and timestamps.
 * Shared by the statement runners of the package; no state.
 */
final class JobValues {

    private JobValues() {
    }

    /** A duration in whole microseconds (the sub-microsecond rest dropped); overflow throws. */
    static long micros(Duration d) {
        return Math.addExact(Math.multiplyExact(d.getSeconds(), 1_000_000L), d.getNano() / 1_000);
    }

    /** An instant as microseconds since the epoch (the sub-microsecond rest dropped); overflow throws. */
    static long micros(Instant t) {
        return Math.addExact(Math.multiplyExact(t.getEpochSecond(), 1_000_000L), t.getNano() / 1_000);
    }

    /** The instant of {@code us} microseconds since the epoch (negative ones before it). */
    static Instant fromMicros(long us) {
        return Instant.ofEpochSecond(Math.floorDiv(us, 1_000_000L), Math.floorMod(us, 1_000_000L) * 1_000L);
    }

    /** A column of {@link QueueSql#micros}: microseconds since the epoch, or null. */
    static Instant micros(ResultSet rs, int column) throws SQLException {
        long us = rs.getLong(column);
        return rs.wasNull() ? null : fromMicros(us);
    }

    static Instant instant(Timestamp ts) {
        return ts == null ? null : ts.toInstant();
    }
}
