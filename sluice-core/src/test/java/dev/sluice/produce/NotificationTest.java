package dev.sluice.produce;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Outgoing;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.internal.notify.Channels;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
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
            List<PGNotification> got = drain(listener);
            assertThat(got).hasSize(1);
            assertThat(got.get(0).getParameter()).isEqualTo(Long.toString(id));

            p.produce("a");
            p.produce("b");
            assertThat(drain(listener)).hasSize(2).allSatisfy(n -> assertThat(n.getParameter()).isEqualTo(Long.toString(id)));
        }
    }

    private static List<PGNotification> drain(Connection c) throws Exception {
        List<PGNotification> out = new ArrayList<>();
        PGConnection pg = c.unwrap(PGConnection.class);
        long deadline = System.currentTimeMillis() + 1500;
        while (System.currentTimeMillis() < deadline) {
            PGNotification[] n = pg.getNotifications(200);
            if (n != null) {
                out.addAll(List.of(n));
            }
        }
        return out;
    }
}
