package dev.sluice.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.embedded.EmbeddedPostgresServer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The latency benchmark on a short window: both modes measured, nothing lost, JSON fields present; and a
 * short run with the xmin pinned, whose pin another session must see holding its xid. The pinned latency
 * target is the benchmark's (docs/benchmarks.md), not this test's.
 */
class LatencyBenchmarkTest {
    private static EmbeddedPostgresServer server;

    @BeforeAll
    static void start() {
        server = SharedServer.get(); // stopped at JVM exit, shared with the other scenario tests
    }

    @Test
    void measuresBothModesWithoutLosingMessages() throws Exception {
        LatencyBenchmark.Result result = new LatencyBenchmark().run(LatencyBenchmark.Options.defaults()
                .withDatabaseUrl(server.jdbcUrl()).withRate(50).withWarmup(Duration.ofMillis(200))
                .withDuration(Duration.ofSeconds(1)).withPollInterval(Duration.ofMillis(200)));

        LatencyBenchmark.RunResult run = result.runs().get(0);
        for (LatencyBenchmark.Latencies l : List.of(run.wakeups(), run.pollOnly())) {
            assertThat(l.messages()).isPositive();
            assertThat(l.lost()).isZero();
            assertThat(l.p50Ms()).isNotNegative();
            assertThat(l.p95Ms()).isGreaterThanOrEqualTo(l.p50Ms());
            assertThat(l.p99Ms()).isGreaterThanOrEqualTo(l.p95Ms());
            assertThat(l.maxMs()).isGreaterThanOrEqualTo(l.p99Ms());
        }
        assertThat(run.pollOnly().p50Ms()).isPositive();

        JsonNode summary = BenchAssertions.summary(result, "latency",
                List.of("p50_ms", "p95_ms", "p99_ms", "poll_only_p50_ms"));
        assertThat(summary.get("unit").asText()).isEqualTo("ms");
        assertThat(summary.get("ratio").asDouble())
                .isEqualTo(BenchJson.round(run.wakeups().p50Ms() / run.pollOnly().p50Ms(), 4));
        BenchAssertions.assertNoBenchSchemaLeft(server);
    }

    /** Another session's view of the pin, polled during the run. */
    private static final String OBSERVE_PIN = """
            SELECT backend_xid::text, state, pg_snapshot_xmin(pg_current_snapshot())::text
              FROM pg_stat_activity
             WHERE application_name = ?
            """;

    @Test
    void aPinnedRunHoldsAnXidAndReportsThePinnedFields() throws Exception {
        Set<Long> seenXids = ConcurrentHashMap.newKeySet();
        AtomicLong idleInTransaction = new AtomicLong();
        AtomicLong lowestXminWhilePinned = new AtomicLong(Long.MAX_VALUE);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> observerFailed = new AtomicReference<>();
        Thread observer = new Thread(() -> {
            try (Connection c = server.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(OBSERVE_PIN)) {
                ps.setString(1, LatencyBenchmark.PIN_APPLICATION_NAME);
                while (!stop.get()) {
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            if (rs.getString(1) != null) {
                                seenXids.add(Long.parseLong(rs.getString(1)));
                                lowestXminWhilePinned.accumulateAndGet(Long.parseLong(rs.getString(3)), Math::min);
                                if ("idle in transaction".equals(rs.getString(2))) {
                                    idleInTransaction.incrementAndGet();
                                }
                            }
                        }
                    }
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
                }
            } catch (Throwable e) {
                observerFailed.set(e);
            }
        }, "pin-observer");
        observer.start();
        LatencyBenchmark.Result result;
        try {
            result = new LatencyBenchmark().run(LatencyBenchmark.Options.defaults()
                    .withDatabaseUrl(server.jdbcUrl()).withRate(200).withWarmup(Duration.ofMillis(200))
                    .withDuration(Duration.ofSeconds(1)).withPollInterval(Duration.ofMillis(200))
                    .withPinXminFor(Duration.ofSeconds(3)));
        } finally {
            stop.set(true);
            observer.join();
        }
        assertThat(observerFailed.get()).isNull();

        LatencyBenchmark.RunResult run = result.runs().get(0);
        LatencyBenchmark.Pin pin = run.pin();
        assertThat(pin).isNotNull();
        assertThat(pin.xid()).as("pg_current_xact_id() of the pin").isPositive();
        assertThat(pin.held()).as("the pin's backend still held its xid at the end").isTrue();
        assertThat(pin.heldSeconds()).isGreaterThanOrEqualTo(3.0);
        // Another session saw that very xid held by an idle transaction, and its own xmin held back by it.
        assertThat(seenXids).containsExactly(pin.xid() % (1L << 32));
        assertThat(idleInTransaction.get()).isPositive();
        assertThat(lowestXminWhilePinned.get()).isLessThanOrEqualTo(pin.xid());

        LatencyBenchmark.Latencies pinned = run.pinned();
        assertThat(pinned.messages()).as("messages committed under the pin").isGreaterThan(100);
        assertThat(pinned.lost()).isBetween(0L, pinned.messages());
        assertThat(run.wakeups().lost()).isZero();

        JsonNode summary = BenchAssertions.summary(result, "latency",
                List.of("p50_ms", "p99_ms", "lost", "pinned_p50_ms", "pinned_p99_ms", "pinned_lost", "pinned_p99_ratio",
                        "pin_xmin_for_s"));
        assertThat(summary.get("pinned_lost").asLong()).isEqualTo(pinned.lost());
        assertThat(summary.get("pin_xmin_for_s").asDouble()).isEqualTo(3.0);
        JsonNode line = new ObjectMapper().readTree(BenchJson.line(result.runLines().get(0)));
        assertThat(line.get("pin_xid").asLong()).isEqualTo(pin.xid());
        assertThat(line.get("pin_held").asBoolean()).isTrue();
        if (pinned.lost() < pinned.messages()) {
            assertThat(summary.get("pinned_p99_ms").asDouble()).isEqualTo(BenchJson.round(pinned.p99Ms(), 2));
            assertThat(summary.get("pinned_p99_ratio").asDouble())
                    .isEqualTo(BenchJson.round(pinned.p99Ms() / run.wakeups().p99Ms(), 3));
        } else {
            assertThat(summary.get("pinned_p99_ms").isNull()).as("no delivered message: no p99").isTrue();
        }
        BenchAssertions.assertNoBenchSchemaLeft(server);
        assertThat(pinSessionsLeft()).as("the pin's connection was closed").isZero();
    }

    @Test
    void aPinShorterThanASecondIsRefused() {
        LatencyBenchmark.Options o = LatencyBenchmark.Options.defaults();
        for (Duration d : List.of(Duration.ZERO, Duration.ofMillis(999), Duration.ofSeconds(-5))) {
            assertThatThrownBy(() -> o.withPinXminFor(d))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 1s");
        }
        assertThat(o.pinned()).isFalse();
        assertThat(o.withPinXminFor(Duration.ofSeconds(100)).pinned()).isTrue();
    }

    private static long pinSessionsLeft() throws Exception {
        try (Connection c = server.dataSource().getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM pg_stat_activity WHERE application_name = ?")) {
            ps.setString(1, LatencyBenchmark.PIN_APPLICATION_NAME);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    @Test
    void nearestRankQuantiles() {
        double[] v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
        assertThat(Bench.quantile(v, 0.5)).isEqualTo(5);
        assertThat(Bench.quantile(v, 0.95)).isEqualTo(10);
        assertThat(Bench.quantile(v, 0.0)).isEqualTo(1);
        assertThat(Bench.quantile(new double[0], 0.5)).isNaN();
    }
}
