package dev.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.JobHandle;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.util.List;
import org.junit.jupiter.api.Test;

/** On a fresh schema, queue, lock and schedule commands install the control plane; foreign schemas are refused. */
@SluiceTest
class FirstUseCliTest {

    @Test
    void enqueueOnAFreshSchemaInstallsTheControlPlaneAndTheJobCanBeWorked(TestDatabase db) {
        String schema = db.freshSchemaName("cli_first_q");
        CliTest.Run enq = CliTest.run(db, schema, "queue", "enqueue", "emails", "--payload", "hi");
        assertThat(enq.exit()).as(enq.err()).isZero();
        long id = Long.parseLong(enq.out().trim());
        try (Sluice sluice = QueueCliTest.client(db, schema)) {
            List<JobHandle<String>> claimed = sluice.queue("emails", String.class).claim(5);
            assertThat(claimed).extracting(JobHandle::id).containsExactly(id);
            assertThat(claimed.get(0).payload()).isEqualTo("hi");
            assertThat(claimed.get(0).ack()).isTrue();
        }
    }

    @Test
    void lockAcquireOnAFreshSchemaInstallsTheControlPlane(TestDatabase db) {
        String schema = db.freshSchemaName("cli_first_l");
        CliTest.Run first = CliTest.run(db, schema, "lock", "acquire", "nightly", "--ttl", "1m", "-o", "json");
        assertThat(first.exit()).as(first.err()).isZero();
        assertThat(first.json().get("fencing_token").asLong()).isEqualTo(1);
        CliTest.Run second = CliTest.run(db, schema, "lock", "acquire", "nightly");
        assertThat(second.exit()).isEqualTo(Main.FAILURE);
        assertThat(second.err()).contains("held");
        CliTest.Run list = CliTest.run(db, schema, "lock", "list", "-o", "json");
        assertThat(list.json().get(0).get("held").asBoolean()).isTrue();
    }

    @Test
    void scheduleRegisterOnAFreshSchemaInstallsTheControlPlane(TestDatabase db) {
        String schema = db.freshSchemaName("cli_first_s");
        CliTest.Run reg = CliTest.run(db, schema, "schedule", "register", "tick", "--every", "1m", "--queue", "ticks");
        assertThat(reg.exit()).as(reg.err()).isZero();
        assertThat(CliTest.run(db, schema, "schedule", "list").out()).contains("tick");
    }

    @Test
    void aForeignSchemaIsRefusedUnlessForced(TestDatabase db) {
        String schema = db.freshSchemaName("cli_app");
        db.execute("CREATE SCHEMA " + schema);
        db.execute("CREATE TABLE " + schema + ".accounts (id bigint)");
        CliTest.Run refused = CliTest.run(db, schema, "queue", "enqueue", "emails", "--payload", "hi");
        assertThat(refused.exit()).isEqualTo(Main.FAILURE);
        assertThat(refused.err()).contains("SLU-0116").contains("--force-schema");
        CliTest.Run stream = CliTest.run(db, schema, "stream", "register", "orders");
        assertThat(stream.err()).contains("SLU-0116");

        CliTest.Run forced = CliTest.run(db, schema, "stream", "register", "orders", "--force-schema");
        assertThat(forced.exit()).as(forced.err()).isZero();
        CliTest.Run after = CliTest.run(db, schema, "queue", "enqueue", "emails", "--payload", "hi");
        assertThat(after.exit()).as("the schema holds Sluice now: no forcing needed").isZero();
    }
}
