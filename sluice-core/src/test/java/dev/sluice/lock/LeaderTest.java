package dev.sluice.lock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.LeaderListener;
import dev.sluice.Leadership;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** Leader election: one leader at a time among contenders, failover on close and when the leader stops renewing. */
@SluiceTest
class LeaderTest {
    static final Duration TTL = Duration.ofMillis(900);

    /** Counts leaders across contenders and records the order of events. */
    static final class Tally {
        final AtomicInteger leaders = new AtomicInteger();
        final AtomicInteger maxLeaders = new AtomicInteger();
        final List<String> events = new CopyOnWriteArrayList<>();

        LeaderListener listener(String name) {
            return new LeaderListener() {
                @Override
                public void onElected(long fencingToken) {
                    maxLeaders.accumulateAndGet(leaders.incrementAndGet(), Math::max);
                    events.add(name + " elected " + fencingToken);
                }

                @Override
                public void onRevoked() {
                    leaders.decrementAndGet();
                    events.add(name + " revoked");
                }
            };
        }
    }

    /** A data source that can be cut off, like a process partitioned from the database. */
    static final class Switch implements DataSource {
        final DataSource delegate;
        final AtomicBoolean down = new AtomicBoolean();

        Switch(DataSource delegate) {
            this.delegate = delegate;
        }

        @Override
        public Connection getConnection() throws SQLException {
            if (down.get()) {
                throw new SQLException("network partition (test)", "08001");
            }
            return delegate.getConnection();
        }

        @Override
        public Connection getConnection(String user, String password) throws SQLException {
            return getConnection();
        }

        @Override
        public PrintWriter getLogWriter() {
            return null;
        }

        @Override
        public void setLogWriter(PrintWriter out) {
        }

        @Override
        public void setLoginTimeout(int seconds) {
        }

        @Override
        public int getLoginTimeout() {
            return 0;
        }

        @Override
        public Logger getParentLogger() {
            return Logger.getGlobal();
        }

        @Override
        public <T> T unwrap(Class<T> iface) throws SQLException {
            throw new SQLException("not a wrapper");
        }

        @Override
        public boolean isWrapperFor(Class<?> iface) {
            return false;
        }
    }

    private static Sluice client(DataSource ds, TestDatabase db, String id) {
        return Sluice.builder().dataSource(ds).schema(db.schema()).clientId(id).build();
    }

    @Test
    void exactlyOneOfTwoContendersLeadsAndTheOtherTakesOverWhenItCloses(TestDatabase db) {
        Tally tally = new Tally();
        try (Sluice one = client(db.dataSource(), db, "one"); Sluice two = client(db.dataSource(), db, "two")) {
            one.system().register();
            Leadership a = one.leader("scheduler", TTL, tally.listener("a"));
            Leadership b = two.leader("scheduler", TTL, tally.listener("b"));
            await().atMost(Duration.ofSeconds(10)).until(() -> a.isLeader() || b.isLeader());
            // Several renewal periods later, still exactly one leader.
            await().pollDelay(Duration.ofMillis(1500)).atMost(Duration.ofSeconds(5)).until(() -> true);
            assertThat(a.isLeader() ^ b.isLeader()).isTrue();
            Leadership leader = a.isLeader() ? a : b;
            Leadership follower = leader == a ? b : a;
            long firstToken = leader.fencingToken().orElseThrow();
            assertThat(follower.fencingToken()).isEmpty();

            leader.close();
            assertThat(leader.isLeader()).isFalse();
            await().atMost(Duration.ofSeconds(5)).until(follower::isLeader);
            assertThat(follower.fencingToken().orElseThrow()).isGreaterThan(firstToken);
            follower.close();
        }
        assertThat(tally.maxLeaders.get()).isEqualTo(1);
        assertThat(tally.leaders.get()).isZero();
        assertThat(tally.events).hasSize(4);
        assertThat(tally.events.get(1)).endsWith("revoked");
        assertThat(tally.events.get(3)).endsWith("revoked");
    }

    @Test
    void aLeaderThatStopsRenewingStepsDownBeforeTheOtherTakesOver(TestDatabase db) {
        Tally tally = new Tally();
        Switch flaky = new Switch(db.dataSource());
        try (Sluice cut = client(flaky, db, "cut"); Sluice healthy = client(db.dataSource(), db, "healthy")) {
            healthy.system().register();
            Leadership a = cut.leader("janitor", TTL, tally.listener("cut"));
            await().atMost(Duration.ofSeconds(10)).until(a::isLeader);
            Leadership b = healthy.leader("janitor", TTL, tally.listener("healthy"));
            long firstToken = a.fencingToken().orElseThrow();

            flaky.down.set(true);
            await().atMost(Duration.ofSeconds(10)).until(b::isLeader);
            assertThat(a.isLeader()).isFalse();
            assertThat(b.fencingToken().orElseThrow()).isGreaterThan(firstToken);
            assertThat(tally.events).containsExactly("cut elected " + firstToken, "cut revoked",
                    "healthy elected " + b.fencingToken().orElseThrow());

            // Back online, the old leader contends again but cannot take a lock that is renewed.
            flaky.down.set(false);
            await().pollDelay(Duration.ofMillis(1500)).atMost(Duration.ofSeconds(5)).until(() -> true);
            assertThat(a.isLeader()).isFalse();
            assertThat(b.isLeader()).isTrue();
        }
        assertThat(tally.maxLeaders.get()).isEqualTo(1);
    }
}
