package dev.sluice.internal.consume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.ConcurrencyPolicy;
import dev.sluice.ConsumeOptions;
import dev.sluice.ConsumerGroup;
import dev.sluice.DeadLetter;
import dev.sluice.DeliveryLogMode;
import dev.sluice.GroupConfig;
import dev.sluice.Outcome;
import dev.sluice.RetryPolicy;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A delivery whose row lease expires (its handler hung, or its process died) counts as an attempt: after
 * {@code maxAttempts} deliveries the row is dead ("expired: …") instead of being handed out again, and
 * every expiry is in the delivery log. A row given back by a clean close while its handler runs keeps that delivery
 * counted the same way. The lease is expired by an UPDATE, so nothing waits on a clock.
 */
@SluiceTest
class ExpiredDeliveryTest {
    private static final ConsumeOptions FAST = ConsumeOptions.defaults().withWakeups(false)
            .withPollInterval(Duration.ofMillis(20)).withShutdownTimeout(Duration.ofMillis(200));

    private record Event(int attempt, String status, String error) {
    }

    @Test
    void aRowWhoseLastDeliveryExpiredIsDeadNotDeliveredAgain(TestDatabase db) throws Exception {
        for (ConcurrencyPolicy policy : ConcurrencyPolicy.values()) {
            try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
                String stream = "hang-" + policy.name().toLowerCase();
                long sid = sluice.stream(stream).register().id();
                ConsumerGroup<String> group = sluice.stream(stream, String.class).consumerGroup("g");
                long gid = group.register(GroupConfig.builder().concurrency(policy).deliveryLogMode(DeliveryLogMode.FAILURES)
                        .retry(RetryPolicy.DEFAULT.withMaxAttempts(2).withBackoff(Duration.ofMillis(10), 2.0, Duration.ofMillis(10)))
                        .build()).id();
                long id = sluice.stream(stream, String.class).producer().produce("m",
                        dev.sluice.ProduceOptions.builder().messageKey("k").build()).id();
                AtomicInteger calls = new AtomicInteger();
                CountDownLatch hanging = new CountDownLatch(1);
                CountDownLatch release = new CountDownLatch(1);
                GroupConsumer<String> c = (GroupConsumer<String>) group.consume(m -> {
                    int n = calls.incrementAndGet();
                    if (n == 1) {
                        throw new IllegalStateException("first attempt fails");
                    }
                    hanging.countDown();
                    release.await(); // the second attempt never finishes in time
                    return Outcome.success();
                }, FAST);
                try {
                    assertThat(hanging.await(20, TimeUnit.SECONDS)).isTrue();
                    expireLease(db, sid, gid, id);
                    await().atMost(Duration.ofSeconds(20)).until(() -> "dead".equals(status(db, sid, gid, id)));
                    assertThat(calls).hasValue(2);
                    DeadLetter d = group.admin().deadLetters(null, 10).items().get(0);
                    assertThat(d.messageId()).isEqualTo(id);
                    assertThat(d.attempts()).isEqualTo(2);
                    assertThat(d.lastError()).startsWith("expired: the lease of delivery 2 of 2");
                    assertThat(d.errorStack()).isNull();
                    assertThat(events(db, sid, gid, id)).extracting(Event::attempt, Event::status)
                            .containsExactly(org.assertj.core.groups.Tuple.tuple(1, "failed"), org.assertj.core.groups.Tuple.tuple(2, "dead"));
                    assertThat(events(db, sid, gid, id).get(1).error()).isEqualTo(d.lastError());
                    // The hung handler finishes late: its success is refused, the row stays dead.
                    release.countDown();
                    await().atMost(Duration.ofSeconds(20)).until(() -> c.stats().leasesLost() >= 1);
                    assertThat(status(db, sid, gid, id)).isEqualTo("dead");
                    assertThat(calls).hasValue(2);
                } finally {
                    release.countDown();
                    c.close();
                }
            }
        }
    }

    @Test
    void anExpiredDeliveryWithAttemptsLeftRunsAgainAndIsLogged(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            long sid = sluice.stream("again").register().id();
            ConsumerGroup<String> group = sluice.stream("again", String.class).consumerGroup("g");
            long gid = group.register(GroupConfig.builder().deliveryLogMode(DeliveryLogMode.FAILURES)
                    .retry(RetryPolicy.DEFAULT.withMaxAttempts(3).withBackoff(Duration.ofMillis(10), 2.0, Duration.ofMillis(10)))
                    .build()).id();
            long id = sluice.stream("again", String.class).producer().produce("m").id();
            List<Integer> attempts = new java.util.concurrent.CopyOnWriteArrayList<>();
            CountDownLatch hanging = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            try (var c = group.consume(m -> {
                attempts.add(m.attempt());
                if (m.attempt() == 1) {
                    throw new IllegalStateException("first attempt fails");
                }
                if (m.attempt() == 2) {
                    hanging.countDown();
                    release.await();
                }
                return Outcome.success();
            }, FAST)) {
                assertThat(hanging.await(20, TimeUnit.SECONDS)).isTrue();
                expireLease(db, sid, gid, id);
                // Attempt 3 runs and succeeds: the row is gone, and the log holds the failure and the expiry.
                await().atMost(Duration.ofSeconds(20)).until(() -> status(db, sid, gid, id) == null && attempts.size() == 3);
                assertThat(attempts).containsExactly(1, 2, 3);
                assertThat(events(db, sid, gid, id)).extracting(Event::attempt, Event::status)
                        .containsExactly(org.assertj.core.groups.Tuple.tuple(1, "failed"), org.assertj.core.groups.Tuple.tuple(2, "expired"));
                assertThat(events(db, sid, gid, id).get(1).error()).isEqualTo(
                        "the lease of delivery 2 of 3 ran out before its handler finished");
            } finally {
                release.countDown();
            }
        }
    }

    @Test
    void withTheDeliveryLogOffAnExpiryWritesNoEvent(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            long sid = sluice.stream("quiet").register().id();
            ConsumerGroup<String> group = sluice.stream("quiet", String.class).consumerGroup("g");
            long gid = group.register(GroupConfig.builder().deliveryLogMode(DeliveryLogMode.OFF)
                    .retry(RetryPolicy.DEFAULT.withMaxAttempts(2).withBackoff(Duration.ofMillis(10), 2.0, Duration.ofMillis(10)))
                    .build()).id();
            long id = sluice.stream("quiet", String.class).producer().produce("m").id();
            CountDownLatch hanging = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            try (var c = group.consume(m -> {
                if (m.attempt() == 1) {
                    throw new IllegalStateException("first attempt fails");
                }
                hanging.countDown();
                release.await();
                return Outcome.success();
            }, FAST)) {
                assertThat(hanging.await(20, TimeUnit.SECONDS)).isTrue();
                expireLease(db, sid, gid, id);
                await().atMost(Duration.ofSeconds(20)).until(() -> "dead".equals(status(db, sid, gid, id)));
                assertThat(events(db, sid, gid, id)).isEmpty();
            } finally {
                release.countDown();
            }
        }
    }

    /**
     * Runs attempt 1 (it fails) and attempt 2 as a row that is still running when the consumer closes, under
     * {@code maxAttempts}; returns the row's status after the close.
     */
    private static String closeWhileTheSecondAttemptRuns(TestDatabase db, ConsumerGroup<String> group, long sid, long gid, long id)
            throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        var first = group.consume(m -> {
            if (m.attempt() == 1) {
                throw new IllegalStateException("first attempt fails");
            }
            running.countDown();
            release.await();
            return Outcome.success();
        }, FAST);
        try {
            assertThat(running.await(20, TimeUnit.SECONDS)).isTrue();
            first.close(); // attempt 2 is still running: its row goes back at once, the delivery counted
        } finally {
            release.countDown();
        }
        return status(db, sid, gid, id);
    }

    @Test
    void aRowReleasedByACleanCloseWhileItsHandlerRunsKeepsThatDeliveryCounted(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            long sid = sluice.stream("released").register().id();
            ConsumerGroup<String> group = sluice.stream("released", String.class).consumerGroup("g");
            long gid = group.register(GroupConfig.builder().deliveryLogMode(DeliveryLogMode.FAILURES)
                    .retry(RetryPolicy.DEFAULT.withMaxAttempts(3).withBackoff(Duration.ofMillis(10), 2.0, Duration.ofMillis(10)))
                    .build()).id();
            long id = sluice.stream("released", String.class).producer().produce("m").id();
            assertThat(closeWhileTheSecondAttemptRuns(db, group, sid, gid, id)).isEqualTo("ready");
            List<Integer> attempts = new java.util.concurrent.CopyOnWriteArrayList<>();
            try (var second = group.consume(m -> {
                attempts.add(m.attempt());
                return Outcome.success();
            }, FAST)) {
                await().atMost(Duration.ofSeconds(20)).until(() -> status(db, sid, gid, id) == null);
            }
            // Delivered again after the stop: the third delivery, not a second "attempt 2".
            assertThat(attempts).containsExactly(3);
            assertThat(events(db, sid, gid, id)).extracting(Event::attempt, Event::status)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple(1, "failed"));
        }
    }

    @Test
    void aRowWhoseLastDeliveryWasStillRunningAtACleanCloseIsDead(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            long sid = sluice.stream("released-last").register().id();
            ConsumerGroup<String> group = sluice.stream("released-last", String.class).consumerGroup("g");
            long gid = group.register(GroupConfig.builder().deliveryLogMode(DeliveryLogMode.FAILURES)
                    .retry(RetryPolicy.DEFAULT.withMaxAttempts(2).withBackoff(Duration.ofMillis(10), 2.0, Duration.ofMillis(10)))
                    .build()).id();
            long id = sluice.stream("released-last", String.class).producer().produce("m").id();
            // Its second delivery was its last: as with an expired one, it is not handed out a third time.
            assertThat(closeWhileTheSecondAttemptRuns(db, group, sid, gid, id)).isEqualTo("dead");
            List<DeadLetter> dead = group.admin().deadLetters(null, 10).items();
            assertThat(dead).hasSize(1);
            assertThat(dead.get(0).lastError()).isEqualTo("stopped: delivery 2 of 2 was still running when its consumer stopped");
            assertThat(events(db, sid, gid, id)).extracting(Event::attempt, Event::status)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple(1, "failed"), org.assertj.core.groups.Tuple.tuple(2, "dead"));
        }
    }

    /** Expires the in-flight row's lease, as if its holder had stopped renewing it long ago. */
    private static void expireLease(TestDatabase db, long sid, long gid, long id) {
        await().atMost(Duration.ofSeconds(20)).until(() -> "inflight".equals(status(db, sid, gid, id)));
        db.execute("UPDATE \"" + db.schema() + "\".exception_queue_" + sid + " SET lease_expires_at = now() - interval '1 second'"
                + " WHERE consumer_group_id = " + gid + " AND message_id = " + id + " AND status = 'inflight'");
    }

    private static String status(TestDatabase db, long sid, long gid, long id) throws Exception {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement("SELECT status FROM \"" + db.schema()
                + "\".exception_queue_" + sid + " WHERE consumer_group_id = ? AND message_id = ?")) {
            ps.setLong(1, gid);
            ps.setLong(2, id);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }

    private static List<Event> events(TestDatabase db, long sid, long gid, long id) throws Exception {
        List<Event> out = new ArrayList<>();
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement("SELECT attempt, status, error FROM \""
                + db.schema() + "\".delivery_log_" + sid + " WHERE consumer_group_id = ? AND message_id = ? ORDER BY id")) {
            ps.setLong(1, gid);
            ps.setLong(2, id);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new Event(rs.getInt(1), rs.getString(2), rs.getString(3)));
                }
            }
        }
        return out;
    }
}
