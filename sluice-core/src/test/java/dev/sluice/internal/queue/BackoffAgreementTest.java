package dev.sluice.internal.queue;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.RetryPolicy;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.internal.runtime.Backoff;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A queue's backoff is computed in SQL from the row (one statement settles or rescues many rows); it must be
 * the Java definition ({@link Backoff}, which RetryPolicy uses for streams) for attempts 1 to 30.
 */
@SluiceTest
class BackoffAgreementTest {
    private static final String ROW = " FROM (VALUES (?::bigint, ?::bigint, ?::int)) AS j(backoff_base_ns, backoff_max_ns, attempts)";

    @Test
    void sqlAndJavaAgreeForAttempts1To30(TestDatabase db) throws Exception {
        List<Duration[]> options = List.of(
                new Duration[] {Duration.ofSeconds(1), Duration.ofHours(1)},        // the defaults
                new Duration[] {Duration.ofMillis(1), Duration.ofDays(30)},         // the widest range
                new Duration[] {Duration.ofMillis(250), Duration.ofMillis(250)},    // capped from the start
                new Duration[] {Duration.ofMillis(7), Duration.ofMinutes(3)});
        try (Connection c = db.dataSource().getConnection();
             PreparedStatement wait = c.prepareStatement("SELECT " + QueueSql.BACKOFF_WAIT_SECONDS + ROW);
             PreparedStatement jittered = c.prepareStatement(
                     "SELECT extract(epoch FROM " + QueueSql.BACKOFF + ")::float8 FROM generate_series(1, 50),"
                             + ROW.substring(" FROM ".length()))) {
            for (Duration[] o : options) {
                for (int attempt = 1; attempt <= 30; attempt++) {
                    double java = Backoff.queueWait(o[0], o[1], attempt).toNanos() / 1e9;
                    double sql = one(wait, o, attempt);
                    assertThat(sql).as("base %s max %s attempt %d", o[0], o[1], attempt)
                            .isCloseTo(java, org.assertj.core.data.Offset.offset(1e-6));
                    // the jitter: at most 10 % shorter, never longer (make_interval keeps microseconds)
                    bind(jittered, o, attempt);
                    try (ResultSet rs = jittered.executeQuery()) {
                        while (rs.next()) {
                            assertThat(rs.getDouble(1)).as("jittered, attempt %d", attempt)
                                    .isBetween(java * (1 - Backoff.QUEUE_JITTER) - 1e-6, java + 1e-6);
                        }
                    }
                }
            }
        }
        // streams: RetryPolicy is the same formula with its own multiplier
        RetryPolicy p = RetryPolicy.DEFAULT.withBackoff(Duration.ofSeconds(1), 2.0, Duration.ofHours(1));
        for (int attempt = 1; attempt <= 30; attempt++) {
            assertThat(p.backoff(attempt)).isEqualTo(Backoff.queueWait(Duration.ofSeconds(1), Duration.ofHours(1), attempt));
        }
    }

    private static void bind(PreparedStatement ps, Duration[] o, int attempt) throws Exception {
        ps.setLong(1, o[0].toNanos());
        ps.setLong(2, o[1].toNanos());
        ps.setInt(3, attempt);
    }

    private static double one(PreparedStatement ps, Duration[] o, int attempt) throws Exception {
        bind(ps, o, attempt);
        try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getDouble(1);
        }
    }
}
