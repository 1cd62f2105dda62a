package dev.sluice.consume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.ConsumeOptions;
import dev.sluice.Consumption;
import dev.sluice.GroupConfig;
import dev.sluice.Outcome;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * A producer's commit (and an enqueue) wakes the consumers (workers) of its own process at once, without
 * the NOTIFY round trip through the server. Proven with a client whose LISTEN is refused (so no notification can reach it)
 * and whose consumer would otherwise only poll every 60 s.
 */
@SluiceTest
class LocalWakeTest {

    @Test
    void aLocalCommitWakesLocalConsumersWithoutNotify(TestDatabase db) throws Exception {
        ConsumeOptions slow = ConsumeOptions.defaults().withPollInterval(Duration.ofSeconds(60)).withIdleCheck(Duration.ofSeconds(60));
        List<String> handled = new CopyOnWriteArrayList<>();
        try (Sluice deaf = Sluice.builder().dataSource(new NoListenDataSource(db.dataSource())).schema(db.schema()).build();
             Sluice other = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            deaf.stream("local").register();
            deaf.stream("local").consumerGroup("g").register(GroupConfig.defaults());
            try (Consumption c = deaf.stream("local", String.class).consumerGroup("g").consume(m -> {
                     handled.add(m.payload());
                     return Outcome.success();
                 }, slow);
                 Producer<String> local = deaf.stream("local", String.class).producer();
                 Producer<String> remote = other.stream("local", String.class).producer()) {
                // The first poll at start finds nothing; from now on only a wake-up (or 60 s) polls again.
                Thread.sleep(1_000);

                // Control: another client's commit reaches this consumer only through NOTIFY, which it cannot get.
                remote.produce("remote");
                Thread.sleep(2_000);
                assertThat(handled).isEmpty();

                // Our own commit wakes it at once; the claim takes everything committed, the remote one too.
                local.produce("local");
                await().atMost(Duration.ofSeconds(10)).until(() -> handled.size() == 2);
                // One claim, two handlers running side by side (a parallel group): in either order.
                assertThat(handled).containsExactlyInAnyOrder("remote", "local");
            }
        }
    }

    @Test
    void aLocalEnqueueWakesLocalWorkersWithoutNotify(TestDatabase db) throws Exception {
        dev.sluice.WorkOptions slow = dev.sluice.WorkOptions.defaults().withPollInterval(Duration.ofSeconds(60))
                .withIdleCheck(Duration.ofSeconds(60));
        List<String> handled = new CopyOnWriteArrayList<>();
        try (Sluice deaf = Sluice.builder().dataSource(new NoListenDataSource(db.dataSource())).schema(db.schema()).build();
             Sluice other = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            deaf.system().register();
            dev.sluice.Queue<String> local = deaf.queue("jobs", String.class);
            try (dev.sluice.Worker w = local.work(job -> handled.add(job.payload()), slow)) {
                Thread.sleep(1_000);
                // Control: another client's enqueue reaches this worker only through NOTIFY, which it cannot get.
                other.queue("jobs", String.class).enqueue("remote");
                Thread.sleep(2_000);
                assertThat(handled).isEmpty();
                // Our own enqueue wakes it at once; its claim takes the remote job too.
                local.enqueue("local");
                await().atMost(Duration.ofSeconds(10)).until(() -> handled.size() == 2);
                assertThat(handled).containsExactlyInAnyOrder("remote", "local");
            }
        }
    }

    /** Hands out connections on which LISTEN fails, as if the server never delivered a notification. */
    private static final class NoListenDataSource extends dev.sluice.testing.ForwardingDataSource {
        NoListenDataSource(DataSource delegate) {
            super(delegate);
        }

        @Override
        protected Connection wrap(Connection real) {
            return (Connection) Proxy.newProxyInstance(LocalWakeTest.class.getClassLoader(), new Class<?>[] {Connection.class},
                    (proxy, method, args) -> {
                        Object out = invoke(real, method, args);
                        if (out instanceof Statement s && method.getName().equals("createStatement")) {
                            return statement(s);
                        }
                        return out;
                    });
        }

        private static Statement statement(Statement real) {
            return (Statement) Proxy.newProxyInstance(LocalWakeTest.class.getClassLoader(), new Class<?>[] {Statement.class},
                    (proxy, method, args) -> {
                        if (method.getName().startsWith("execute") && args != null && args.length > 0
                                && args[0] instanceof String sql && sql.trim().toUpperCase().startsWith("LISTEN")) {
                            throw new SQLException("LISTEN refused by the test", "42501");
                        }
                        return invoke(real, method, args);
                    });
        }

        private static Object invoke(Object target, java.lang.reflect.Method method, Object[] args) throws Throwable {
            try {
                return method.invoke(target, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        }
    }
}
