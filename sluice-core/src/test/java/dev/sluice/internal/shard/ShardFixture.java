package dev.sluice.internal.shard;

import dev.sluice.Sluice;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.internal.fleet.Instances;
import dev.sluice.internal.fleet.WorkerConfigs;
import dev.sluice.internal.fleet.WorkerInstance;
import dev.sluice.internal.fleet.WorkerKey;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.jdbc.Identifiers;
import dev.sluice.internal.notify.ClientSession;
import dev.sluice.internal.runtime.ClientRuntime;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/** Shared set-up of the shard tests: groups registered through the public API, and "processes" with fleet instances. */
final class ShardFixture {
    static final Duration LEASE = Duration.ofMillis(900);

    private ShardFixture() {
    }

    /** Registers stream/group with the public API and returns the group's id. */
    static long group(Sluice sluice, String stream, String group) {
        sluice.stream(stream).register();
        return sluice.stream(stream).consumerGroup(group).register().id();
    }

    static Sluice admin(TestDatabase db) {
        return Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(false).fleetLease(LEASE).build();
    }

    /** Creates a group's bucket rows (as registration does), in a transaction of its own. */
    static void declare(dev.sluice.internal.jdbc.Db db, Shards shards, long groupId, int count) {
        db.transaction("declare", c -> {
            shards.declare(c, groupId, count);
            return null;
        });
    }

    static long scalar(TestDatabase db, String sql, Object... args) {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setObject(i + 1, args[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getLong(1) : -1;
            }
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    static List<String> strings(TestDatabase db, String sql) {
        List<String> out = new ArrayList<>();
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(sql); ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
        return out;
    }

    /** A data source that records the text of every statement prepared through it. */
    static final class CountingDataSource {
        final ConcurrentLinkedQueue<String> statements = new ConcurrentLinkedQueue<>();
        final DataSource dataSource;

        CountingDataSource(DataSource target) {
            InvocationHandler onDs = (proxy, method, args) -> {
                Object r = invoke(target, method, args);
                return r instanceof Connection c ? connection(c) : r;
            };
            this.dataSource = (DataSource) Proxy.newProxyInstance(getClass().getClassLoader(),
                    new Class<?>[] {DataSource.class}, onDs);
        }

        private Connection connection(Connection c) {
            return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class},
                    (proxy, method, args) -> {
                        if (method.getName().startsWith("prepare") && args != null && args[0] instanceof String sql) {
                            statements.add(sql);
                        }
                        return invoke(c, method, args);
                    });
        }

        private static Object invoke(Object target, java.lang.reflect.Method method, Object[] args) throws Throwable {
            try {
                return method.invoke(target, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        }

        long count(String sql) {
            return statements.stream().filter(sql::equals).count();
        }
    }

    /** One simulated process: its own runtime, fleet instances, session and shard leases. */
    static final class Proc implements AutoCloseable {
        final ClientRuntime runtime;
        final Instances instances;
        final ClientSession session;
        final ShardLeases leases;
        final CountingDataSource counted;
        final List<WorkerInstance> joined = new ArrayList<>();

        Proc(TestDatabase db, String name, boolean withSession) {
            this.runtime = new ClientRuntime(name, 2, 2);
            Db fleetDb = new Db(db.dataSource());
            WorkerConfigs configs = new WorkerConfigs(fleetDb, db.schema(), Identifiers.quote(db.schema()), name);
            this.instances = new Instances(fleetDb, db.schema(), configs, name, LEASE, runtime, null);
            this.session = withSession ? new ClientSession(db.dataSource(), db.schema()) : null;
            this.counted = new CountingDataSource(db.dataSource());
            this.leases = new ShardLeases(new Db(counted.dataSource), db.schema(), LEASE, runtime, () -> session);
        }

        /** A fleet instance of the group's consumer worker (claimed now) and a shard member on it. */
        ShardMember member(String stream, String group, long groupId, int count, Runnable onChange) {
            WorkerInstance w = instances.join(WorkerKey.consumer(stream, group));
            joined.add(w);
            return leases.join(groupId, count, w::instanceId, onChange);
        }

        ShardMember member(String stream, String group, long groupId, int count) {
            return member(stream, group, groupId, count, () -> { });
        }

        @Override
        public void close() {
            leases.close();
            instances.close();
            if (session != null) {
                session.close();
            }
            runtime.close();
        }
    }

    /** A counter to hand to a member as its {@code onChange}. */
    static final class Calls implements Runnable {
        final AtomicInteger n = new AtomicInteger();

        @Override
        public void run() {
            n.incrementAndGet();
        }

        int get() {
            return n.get();
        }
    }
}
