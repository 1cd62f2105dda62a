package dev.sluice.internal.notify;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.lang.reflect.Field;
import java.sql.Connection;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

@SluiceTest
class NotificationReceiptTest {

    @Test
    void theTrailingCheckIsOffWhileHeldAndRestoredAfter(TestDatabase db) throws Exception {
        try (Connection listener = db.connect(); Connection notifier = db.connect()) {
            listener.setAutoCommit(true);
            Object stream = stream(listener);
            Field next = stream.getClass().getDeclaredField("nextStreamAvailableCheckTime");
            next.setAccessible(true);
            long before = next.getLong(stream);
            try (NotificationReceipt r = NotificationReceipt.prompt(listener)) {
                // This pgjdbc is the one the build ships: the setting must take, or the session is a
                // millisecond slower per notification without anyone noticing.
                assertThat(r.active()).isTrue();
                assertThat(next.getLong(stream)).isEqualTo(Long.MAX_VALUE);
                try (Statement s = listener.createStatement()) {
                    s.execute("LISTEN receipt_test");
                }
                try (Statement s = notifier.createStatement()) {
                    s.execute("SELECT pg_notify('receipt_test', 'one'); SELECT pg_notify('receipt_test', 'two')");
                }
                // Both still arrive (the second may come with the first or with the next call).
                java.util.List<String> got = new java.util.ArrayList<>();
                long deadline = System.currentTimeMillis() + 5_000;
                while (got.size() < 2 && System.currentTimeMillis() < deadline) {
                    PGNotification[] n = listener.unwrap(PGConnection.class).getNotifications(250);
                    if (n != null) {
                        for (PGNotification x : n) {
                            got.add(x.getParameter());
                        }
                    }
                }
                assertThat(got).containsExactly("one", "two");
            }
            assertThat(next.getLong(stream)).isEqualTo(before);
        }
    }

    private static Object stream(Connection c) throws Exception {
        Object executor = c.unwrap(org.postgresql.jdbc.PgConnection.class).getQueryExecutor();
        for (Class<?> k = executor.getClass(); k != null; k = k.getSuperclass()) {
            try {
                Field f = k.getDeclaredField("pgStream");
                f.setAccessible(true);
                return f.get(executor);
            } catch (NoSuchFieldException e) {
                // superclass
            }
        }
        throw new AssertionError("no pgStream");
    }
}
