package dev.sluice.internal.notify;

import dev.sluice.embedded.test.TestDatabase;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/** For tests of wake-ups: a connection that listens on the schema's channel, and what reaches it. */
public final class Notifications {
    private Notifications() {
    }

    /** A connection (the caller closes it) that LISTENs on {@code db}'s schema channel. */
    public static Connection listen(TestDatabase db) throws Exception {
        Connection c = db.connect();
        listenOn(c, db.schema());
        return c;
    }

    /** Makes {@code c} LISTEN on the schema's channel. */
    public static void listenOn(Connection c, String schema) throws Exception {
        try (Statement s = c.createStatement()) {
            s.execute("LISTEN \"" + Channels.forSchema(schema) + "\"");
        }
    }

    /** Every notification that reaches {@code c} within {@code millis}. */
    public static List<PGNotification> drain(Connection c, long millis) throws Exception {
        List<PGNotification> out = new ArrayList<>();
        PGConnection pg = c.unwrap(PGConnection.class);
        long deadline = System.currentTimeMillis() + millis;
        while (System.currentTimeMillis() < deadline) {
            PGNotification[] n = pg.getNotifications(100);
            if (n != null) {
                out.addAll(List.of(n));
            }
        }
        return out;
    }
}
