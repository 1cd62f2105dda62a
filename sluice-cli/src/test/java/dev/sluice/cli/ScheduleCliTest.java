package dev.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import org.junit.jupiter.api.Test;

@SluiceTest
class ScheduleCliTest {

    @Test
    void registerGetListRunSuspendResumeServeAndDestroy(TestDatabase db) {
        String schema = db.freshSchemaName("cli_schedule");
        assertThat(CliTest.run(db, schema, "schedule", "list").out()).contains("no schedules");
        CliTest.run(db, schema, "stream", "register", "ticks");

        CliTest.Run reg = CliTest.run(db, schema, "schedule", "register", "tick", "--every", "1s", "--stream", "ticks",
                "--data", "hello", "-o", "json");
        assertThat(reg.exit()).as(reg.err()).isZero();
        assertThat(reg.json().get("expression").asText()).isEqualTo("@every 1s");
        assertThat(reg.json().get("target").asText()).isEqualTo("ticks");
        assertThat(reg.json().get("payload_bytes").asInt()).isEqualTo(5);
        CliTest.Run cron = CliTest.run(db, schema, "schedule", "register", "nightly", "--cron", "0 2 * * *", "--zone",
                "Europe/Berlin", "--queue", "reports", "--catch-up", "3");
        assertThat(cron.exit()).as(cron.err()).isZero();
        assertThat(cron.out()).contains("Europe/Berlin").contains("catch-up");

        CliTest.Run list = CliTest.run(db, schema, "schedule", "list");
        assertThat(list.out()).contains("NAME").contains("nightly").contains("queue:reports").contains("stream:ticks");
        assertThat(CliTest.run(db, schema, "schedule", "list", "-o", "json").json()).hasSize(2);
        assertThat(CliTest.run(db, schema, "schedule", "get", "nightly", "-o", "json").json().get("zone").asText())
                .isEqualTo("Europe/Berlin");

        CliTest.Run run = CliTest.run(db, schema, "schedule", "run", "nightly", "-o", "json");
        assertThat(run.exit()).as(run.err()).isZero();
        assertThat(run.json().get("key").asText()).startsWith("schedule:nightly:now:");
        assertThat(CliTest.run(db, schema, "schedule", "suspend", "nightly", "-o", "json").json().get("suspended").asBoolean()).isTrue();
        assertThat(CliTest.run(db, schema, "schedule", "resume", "nightly", "-o", "json").json().get("suspended").asBoolean()).isFalse();

        CliTest.Run serve = CliTest.run(db, schema, "schedule", "serve", "--for", "3s");
        assertThat(serve.exit()).as(serve.err()).isZero();
        assertThat(serve.out()).containsPattern("stopped after [1-9][0-9]* fires");
        assertThat(CliTest.run(db, schema, "stream", "read", "ticks").out()).contains("hello");

        // Bad input: coded errors, usage errors.
        CliTest.Run badCron = CliTest.run(db, schema, "schedule", "register", "x", "--cron", "61 * * * *", "--queue", "q");
        assertThat(badCron.exit()).isEqualTo(Main.FAILURE);
        assertThat(badCron.err()).contains("SLU-0013");
        assertThat(CliTest.run(db, schema, "schedule", "register", "x", "--every", "5s", "--stream", "missing").err())
                .contains("SLU-0100");
        assertThat(CliTest.run(db, schema, "schedule", "register", "x", "--every", "5s").exit()).isEqualTo(Main.USAGE);
        assertThat(CliTest.run(db, schema, "schedule", "register", "x", "--every", "5s", "--cron", "* * * * *", "--queue", "q")
                .exit()).isEqualTo(Main.USAGE);
        assertThat(CliTest.run(db, schema, "schedule", "get", "nope").err()).contains("SLU-0113");

        assertThat(CliTest.run(db, schema, "schedule", "destroy", "tick").exit()).isEqualTo(Main.USAGE);
        assertThat(CliTest.run(db, schema, "schedule", "destroy", "tick", "--yes").out()).contains("destroyed schedule 'tick'");
        assertThat(CliTest.run(db, schema, "schedule", "list", "-o", "json").json()).hasSize(1);
    }
}
