package dev.sluice.produce;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.AmbientTransaction;
import dev.sluice.EnqueueOptions;
import dev.sluice.Outgoing;
import dev.sluice.ProduceOptions;
import dev.sluice.Queue;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.internal.notify.Channels;
import dev.sluice.internal.notify.Notifications;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.postgresql.PGNotification;

@SluiceTest
class NotificationTest {

    @Test
    void oneTinyNotificationPerStreamPerProducingTransaction(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build();
             Connection listener = db.connect()) {
            long id = sluice.stream("wake").register().id();
            Producer<String> p = sluice.stream("wake", String.class).producer();
            try (Statement s = listener.createStatement()) {
                s.execute("LISTEN \"" + Channels.forSchema(db.schema()) + "\"");
            }
            List<Outgoing<String>> fifty = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                fifty.add(Outgoing.of("m" + i));
            }
            p.produceBatch(fifty);
            List<PGNotification> got = Notifications.drain(listener, 1500);
            assertThat(got).hasSize(1);
            assertThat(got.get(0).getParameter()).isEqualTo(Long.toString(id));

            // Each commit is followed by its own wake-up (sent after it, outside it: one, not two).
            p.produce("a");
            assertThat(Notifications.drain(listener, 1500)).extracting(PGNotification::getParameter).containsExactly(Long.toString(id));
            p.produce("b");
            assertThat(Notifications.drain(listener, 1500)).extracting(PGNotification::getParameter).containsExactly(Long.toString(id));
        }
    }

    /**
     * A caller's transaction without an after-commit action of ours sends the wake-up itself, at its commit (the
     * notification comes from its own backend); a joined ambient transaction sends none — the after-commit action
     * does, from another connection — so the caller's commit never waits on the server's notification lock.
     */
    @Test
    void aCallersTransactionCarriesItsWakeUpAndAJoinedOneLeavesItToAfterTheCommit(TestDatabase db) throws Exception {
        ThreadLocal<Connection> current = new ThreadLocal<>();
        List<Runnable> afterCommit = new ArrayList<>();
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema())
                .ambientTransaction(() -> current.get() == null ? null
                        : AmbientTransaction.joined(current.get(), afterCommit::add)).build();
             Connection c = db.connect()) {
            long id = sluice.stream("wake-tx").register().id();
            Producer<String> p = sluice.stream("wake-tx", String.class).producer();
            Queue<String> q = sluice.queue("wake-tx", String.class);
            q.enqueue("warm-up"); // the control plane exists before the transactions below
            int pid;
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
                rs.next();
                pid = rs.getInt(1);
                s.execute("LISTEN \"" + Channels.forSchema(db.schema()) + "\"");
            }
            Notifications.drain(c, 1500);
            c.setAutoCommit(false);
            p.produceInTransaction(c, "explicit", ProduceOptions.NONE);
            q.enqueueInTransaction(c, "explicit", EnqueueOptions.NONE);
            c.commit();
            assertThat(Notifications.drain(c, 1500)).allSatisfy(n -> assertThat(n.getPID()).isEqualTo(pid))
                    .extracting(PGNotification::getParameter).containsExactlyInAnyOrder(Long.toString(id), "q:wake-tx");

            current.set(c);
            try {
                p.produce("joined");
                q.enqueue("joined");
            } finally {
                current.remove();
            }
            c.commit();
            assertThat(Notifications.drain(c, 1500)).isEmpty();
            assertThat(afterCommit).hasSize(2);
            afterCommit.forEach(Runnable::run);
            assertThat(Notifications.drain(c, 1500)).allSatisfy(n -> assertThat(n.getPID()).isNotEqualTo(pid))
                    .extracting(PGNotification::getParameter).containsExactlyInAnyOrder(Long.toString(id), "q:wake-tx");
            c.setAutoCommit(true);
        }
    }
}
