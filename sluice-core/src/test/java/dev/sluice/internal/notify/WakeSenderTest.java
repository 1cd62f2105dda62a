package dev.sluice.internal.notify;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.runtime.ClientRuntime;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.postgresql.PGNotification;

/**
 * The wake-ups of a client's own commits go out after them, in a statement of their own: repeats fold, what is
 * left at close is still sent, and the statement's asynchronous commit stays inside its own transaction.
 */
@SluiceTest
class WakeSenderTest {

    @Test
    void theSendCommitsAsynchronouslyOnlyItselfAndNotifiesEveryPayload(TestDatabase db) throws Exception {
        try (Connection listener = Notifications.listen(db); Connection c = db.connect()) {
            c.setAutoCommit(true);
            try (PreparedStatement ps = c.prepareStatement(WakeSender.SEND)) {
                ps.setString(1, Channels.forSchema(db.schema()));
                ps.setArray(2, c.createArrayOf("text", new String[] {"42", "q:mail"}));
                try (ResultSet rs = ps.executeQuery()) {
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getLong(1)).isEqualTo(2);
                }
            }
            // The connection goes back to a pool: later commits on it must wait for their flush again.
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SHOW synchronous_commit")) {
                rs.next();
                assertThat(rs.getString(1)).isEqualTo("on");
            }
            assertThat(Notifications.drain(listener, 1000)).extracting(PGNotification::getParameter).containsExactlyInAnyOrder("42", "q:mail");
        }
    }

    @Test
    void repeatsBeforeASendFoldIntoOneAndCloseSendsWhatIsLeft(TestDatabase db) throws Exception {
        ClientRuntime runtime = new ClientRuntime("wake-test", 1, 1);
        CountDownLatch release = new CountDownLatch(1);
        try (Connection listener = Notifications.listen(db)) {
            // The scheduler's one thread is busy, so the loop cannot send: the payloads wait, folded.
            runtime.scheduler().execute(() -> {
                try {
                    release.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            WakeSender sender = new WakeSender(new Db(db.dataSource()), db.schema(), runtime);
            for (int i = 0; i < 5; i++) {
                sender.send("7");
                sender.send("q:mail");
            }
            assertThat(sender.pending()).isEqualTo(2);
            assertThat(Notifications.drain(listener, 1000)).isEmpty();

            sender.close(); // sends on the closing thread: a process that ends now still wakes the others
            assertThat(Notifications.drain(listener, 1000)).extracting(PGNotification::getParameter).containsExactlyInAnyOrder("7", "q:mail");
            assertThat(sender.pending()).isZero();
            sender.send("8"); // after close: dropped, not queued for ever
            assertThat(sender.pending()).isZero();
        } finally {
            release.countDown();
            runtime.close();
        }
    }

    @Test
    void aSendRunsAtOnceOnTheSchedulerAndASecondSendFollowsTheFirst(TestDatabase db) throws Exception {
        ClientRuntime runtime = new ClientRuntime("wake-test-2", 1, 1);
        try (Connection listener = Notifications.listen(db)) {
            WakeSender sender = new WakeSender(new Db(db.dataSource()), db.schema(), runtime);
            sender.send("1");
            assertThat(Notifications.drain(listener, 1000)).extracting(PGNotification::getParameter).containsExactly("1");
            sender.send("1");
            assertThat(Notifications.drain(listener, 1000)).extracting(PGNotification::getParameter).containsExactly("1");
            sender.close();
        } finally {
            runtime.close();
        }
    }
}
