package dev.sluice.internal.notify;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.ConsumeOptions;
import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.Outcome;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.internal.consume.Presence;
import dev.sluice.testing.ForwardingDataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * Another role holding a presence key exclusively must not stop the session connection: the shared lock
 * is tried (never waited for) with a bounded backoff, wake-ups keep arriving meanwhile, and the lock is
 * taken once the exclusive holder lets go. (The blocking form stopped every wake-up of the client.)
 */
@SluiceTest
class PresenceLockTest {

    @Test
    void aConsumerIsWokenWhileItsPresenceKeyIsHeldExclusivelyAndTakesItAfter(TestDatabase db) throws Exception {
        try (Sluice consumerSide = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build();
             Sluice producerSide = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build();
             Connection blocker = db.connect()) {
            consumerSide.stream("woken").register();
            ConsumerGroup<String> group = consumerSide.stream("woken", String.class).consumerGroup("g");
            long gid = group.register().id();
            String key = Presence.key(db.schema(), gid);
            exclusive(blocker, key, true);
            // Without wake-ups this consumer would look again only after a minute.
            ConsumeOptions sleepy = ConsumeOptions.defaults().withIdleCheck(Duration.ofMinutes(1))
                    .withPollInterval(Duration.ofMinutes(1));
            List<String> handled = new CopyOnWriteArrayList<>();
            try (Consumption c = group.consume(m -> {
                handled.add(m.payload());
                return Outcome.success();
            }, sleepy)) {
                // A first message (found by the consumer's first probe), then the consumer parks for its idle
                // minute: from then on only a wake-up finds a new message in time.
                producerSide.stream("woken", String.class).producer().produce("first");
                await().atMost(Duration.ofSeconds(20)).until(() -> handled.contains("first"));
                await().atMost(Duration.ofSeconds(20)).until(() -> idleWaiting(c));
                producerSide.stream("woken", String.class).producer().produce("wake up");
                await().atMost(Duration.ofSeconds(10)).until(() -> handled.contains("wake up"));
                assertThat(anyLive(db, gid)).as("the exclusive holder still has the key").isTrue();
                exclusive(blocker, key, false);
                // The session takes its shared lock: an operator's exclusive try now sees a live consumer.
                await().atMost(Duration.ofSeconds(10)).until(() -> anyLive(db, gid));
                assertThat(sharedHolders(db, gid)).isEqualTo(1);
            }
        }
    }

    @Test
    void aHoldCompletesOnceTheExclusiveHolderLetsGoAndWakeUpsArriveMeanwhile(TestDatabase db) throws Exception {
        String key = "sluice.presence:" + db.schema() + ":direct";
        // The session connects only once the waiter is registered, so its connect wake-up is counted
        // (otherwise a quick connect could wake before the registration: one wake-up, not two).
        CountDownLatch registered = new CountDownLatch(1);
        DataSource gated = new ForwardingDataSource(db.dataSource()) {
            @Override
            public Connection getConnection() throws SQLException {
                try {
                    registered.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new SQLException("interrupted", e);
                }
                return super.getConnection();
            }
        };
        try (Connection blocker = db.connect(); Connection notifier = db.connect();
             ClientSession session = new ClientSession(gated, db.schema())) {
            exclusive(blocker, key, true);
            CompletableFuture<Void> hold = session.holdPresence(key);
            AtomicInteger woken = new AtomicInteger();
            try (AutoCloseable registration = session.onWake("q:direct", woken::incrementAndGet)) {
                registered.countDown();
                // The session wakes every waiter once when it connects; the notification is the second wake-up.
                await().atMost(Duration.ofSeconds(20)).until(() -> session.healthy() && woken.get() == 1);
                try (PreparedStatement ps = notifier.prepareStatement("SELECT pg_notify(?, 'q:direct')")) {
                    ps.setString(1, Channels.forSchema(db.schema()));
                    ps.execute();
                }
                await().atMost(Duration.ofSeconds(10)).until(() -> woken.get() == 2);
                assertThat(hold).isNotDone();
                exclusive(blocker, key, false);
                hold.get(10, TimeUnit.SECONDS);
                assertThat(hold).isCompleted();
                // Held shared by the session: an exclusive try elsewhere fails, a shared one succeeds.
                try (PreparedStatement ps = notifier.prepareStatement(
                        "SELECT pg_try_advisory_xact_lock(hashtextextended(?, 0)), pg_try_advisory_xact_lock_shared(hashtextextended(?, 0))")) {
                    ps.setString(1, key);
                    ps.setString(2, key);
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        assertThat(rs.getBoolean(1)).isFalse();
                        assertThat(rs.getBoolean(2)).isTrue();
                    }
                }
                session.releasePresence(key).get(10, TimeUnit.SECONDS);
                try (PreparedStatement ps = notifier.prepareStatement("SELECT pg_try_advisory_xact_lock(hashtextextended(?, 0))")) {
                    ps.setString(1, key);
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        assertThat(rs.getBoolean(1)).as("released").isTrue();
                    }
                }
            }
        }
    }

    /** Whether the consumer's loop is in its idle wait (its next poll is more than 30 s away). */
    private static boolean idleWaiting(Consumption c) {
        return ((dev.sluice.internal.consume.GroupConsumer<?>) c).idleWaitNanos() > TimeUnit.SECONDS.toNanos(30);
    }

    private static void exclusive(Connection c, String key, boolean take) throws Exception {
        try (PreparedStatement ps = c.prepareStatement("SELECT " + (take ? "pg_advisory_lock" : "pg_advisory_unlock")
                + "(hashtextextended(?, 0))")) {
            ps.setString(1, key);
            ps.execute();
        }
    }

    /** What an operator action sees (its own transaction, the exclusive try). */
    private static boolean anyLive(TestDatabase db, long gid) throws Exception {
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            try {
                return Presence.anyLive(c, db.schema(), gid);
            } finally {
                c.rollback();
            }
        }
    }

    /** Sessions holding the group's presence key in share mode, from pg_locks. */
    private static long sharedHolders(TestDatabase db, long gid) throws Exception {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM pg_locks"
                + " WHERE locktype = 'advisory' AND mode = 'ShareLock' AND granted"
                + " AND ((classid::bigint << 32) | objid::bigint) = hashtextextended(?, 0)")) {
            ps.setString(1, Presence.key(db.schema(), gid));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }
}
