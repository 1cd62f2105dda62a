package dev.sluice.metrics;

import static dev.sluice.metrics.Meters.gauge;
import static dev.sluice.metrics.Meters.hasGauge;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.Consumption;
import dev.sluice.MetricsAccess;
import dev.sluice.Outcome;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.testing.ForwardingDataSource;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The group gauges: lag and backlog follow the group's cursor (produced and not consumed: N; consumed: 0), from the
 * manager's snapshots or, with no live manager, from the client's own reads; gauges come with new groups and go with
 * their stream; one refresh is one statement however many groups there are.
 */
@SluiceTest
class LagGaugeTest {
    private static final Duration QUICK = Duration.ofMillis(100);
    private static final String LAG = "sluice.consumer.lag.messages";
    private static final String BACKLOG = "sluice.consumer.backlog.messages";
    private static final String DEAD = "sluice.dead.letters";

    @Test
    void theLagGaugeFollowsTheManagersSnapshots(TestDatabase db) {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).clientId("lag-managed")
                .maintenanceInterval(QUICK).meterRegistry(registry).meterRefresh(QUICK).build()) {
            sluice.stream("m.lag").register();
            sluice.stream("m.lag", String.class).consumerGroup("reporting").register();
            String[] group = {"stream", "m.lag", "group", "reporting"};
            try (Producer<String> p = sluice.stream("m.lag", String.class).producer()) { // the client now competes
                for (int i = 0; i < 25; i++) {
                    p.produce("m" + i);
                }
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> sluice.maintenance().holding());
            await().atMost(Duration.ofSeconds(10)).until(() -> gauge(registry, LAG, group) == 25
                    && gauge(registry, BACKLOG, group) == 25 && !MetricsAccess.ownFigures(sluice));
            assertThat(gauge(registry, DEAD, group)).isZero();

            AtomicInteger handled = new AtomicInteger();
            try (Consumption c = sluice.stream("m.lag", String.class).consumerGroup("reporting").consume(m -> {
                handled.incrementAndGet();
                return Outcome.success();
            })) {
                await().atMost(Duration.ofSeconds(10)).until(() -> handled.get() == 25);
                await().atMost(Duration.ofSeconds(10)).until(() -> gauge(registry, LAG, group) == 0
                        && gauge(registry, BACKLOG, group) == 0);
            }
            assertThat(MetricsAccess.ownFigures(sluice)).isFalse();
        }
        // Closed: the gauges are gone from the registry (the counters stay).
        assertThat(hasGauge(registry, LAG)).isFalse();
        assertThat(registry.find("sluice.deliveries").counters()).isNotEmpty();
    }

    @Test
    void withoutALiveManagerTheGaugesTakeTheirFiguresThemselvesAndFollowGroupsComingAndGoing(TestDatabase db) {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).clientId("lag-own")
                .maintenance(false).allowDestroy(true).meterRegistry(registry).meterRefresh(QUICK).build()) {
            sluice.stream("m.own").register();
            sluice.stream("m.own").consumerGroup("a").register();
            try (Producer<byte[]> p = sluice.stream("m.own").producer()) {
                for (int i = 0; i < 7; i++) {
                    p.produce(new byte[] {(byte) i});
                }
            }
            String[] a = {"stream", "m.own", "group", "a"};
            String[] b = {"stream", "m.own", "group", "b"};
            await().atMost(Duration.ofSeconds(10)).until(() -> gauge(registry, LAG, a) == 7);
            assertThat(MetricsAccess.ownFigures(sluice)).isTrue();
            assertThat(hasGauge(registry, LAG, b)).isFalse();

            sluice.stream("m.own").consumerGroup("b").register(); // a new group gets its gauges at the next refresh
            await().atMost(Duration.ofSeconds(10)).until(() -> gauge(registry, LAG, b) == 7
                    && gauge(registry, BACKLOG, b) == 7 && gauge(registry, DEAD, b) == 0);

            sluice.stream("m.own").destroy(true); // and a gone group loses them
            await().atMost(Duration.ofSeconds(10)).until(() -> !hasGauge(registry, LAG, a) && !hasGauge(registry, LAG, b));
            assertThat(hasGauge(registry, BACKLOG)).isFalse();
            assertThat(hasGauge(registry, DEAD)).isFalse();
        }
    }

    @Test
    void oneRefreshIsOneStatementHoweverManyGroupsThereAre(TestDatabase db) {
        // A manager elsewhere (another client) takes the snapshots; passes run only when the test says so.
        try (Sluice manager = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).clientId("lag-manager")
                .maintenanceInterval(Duration.ofHours(1)).build()) {
            manager.stream("m.count0").register();
            manager.stream("m.count0").consumerGroup("g").register();
            try (Producer<byte[]> p = manager.stream("m.count0").producer()) { // the manager's client now competes
                p.produce(new byte[] {1});
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> manager.maintenance().holding());
            manager.maintenance().runOnce();

            AtomicInteger statements = new AtomicInteger();
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            try (Sluice watcher = Sluice.builder().dataSource(counting(db, statements)).schema(db.schema())
                    .clientId("lag-watcher").maintenance(false).meterRegistry(registry).meterRefresh(Duration.ofHours(1))
                    .build()) {
                await().atMost(Duration.ofSeconds(10)).until(() -> gauge(registry, LAG, "stream", "m.count0", "group", "g") == 1);
                int before = statements.get();
                MetricsAccess.refresh(watcher);
                assertThat(statements.get() - before).isEqualTo(1);

                for (int s = 1; s <= 3; s++) {
                    manager.stream("m.count" + s).register();
                    for (int g = 0; g < 10; g++) {
                        manager.stream("m.count" + s).consumerGroup("g" + g).register();
                    }
                }
                manager.maintenance().runOnce();
                before = statements.get();
                MetricsAccess.refresh(watcher);
                assertThat(statements.get() - before).isEqualTo(1);
                assertThat(registry.find(LAG).gauges()).hasSize(31);
                assertThat(MetricsAccess.ownFigures(watcher)).isFalse();
            }
        }
    }

    /** The test database, counting the statements prepared or created on its connections. */
    static ForwardingDataSource counting(TestDatabase db, AtomicInteger statements) {
        return new ForwardingDataSource(db.dataSource()) {
            @Override
            protected Connection wrap(Connection real) {
                return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                        (proxy, method, args) -> {
                            String m = method.getName();
                            if (m.equals("prepareStatement") || m.equals("createStatement") || m.equals("prepareCall")) {
                                statements.incrementAndGet();
                            }
                            try {
                                return method.invoke(real, args);
                            } catch (InvocationTargetException e) {
                                throw e.getCause();
                            }
                        });
            }
        };
    }
}
