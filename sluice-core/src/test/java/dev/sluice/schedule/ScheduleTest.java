package dev.sluice.schedule;

import static dev.sluice.schedule.ScheduleSpecTest.assertCode;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.ErrorCode;
import dev.sluice.JobHandle;
import dev.sluice.JobInfo;
import dev.sluice.JobState;
import dev.sluice.ProduceOptions;
import dev.sluice.Produced;
import dev.sluice.ScheduleFire;
import dev.sluice.ScheduleInfo;
import dev.sluice.ScheduleRunner;
import dev.sluice.ScheduleSpec;
import dev.sluice.Sluice;
import dev.sluice.StoredMessage;
import dev.sluice.StreamConfig;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.testing.CountingDataSource;
import dev.sluice.testing.PgCatalog;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Schedules end to end against PostgreSQL: registration, fires into streams and queues, misfires, suspend/resume, run-now, destroy. */
@SluiceTest
class ScheduleTest {
    private Sluice sluice;
    private PgCatalog cat;
    private String q;

    /** A client on a fresh schema of its own, so one test's runner never fires another test's schedules. */
    private Sluice client(TestDatabase db, String hint) {
        String schema = db.freshSchemaName(hint);
        sluice = Sluice.builder().dataSource(db.dataSource()).schema(schema).clientId("sched-" + hint).build();
        sluice.system().register();
        cat = new PgCatalog(db, schema);
        q = "\"" + schema + "\"";
        return sluice;
    }

    @AfterEach
    void close() {
        if (sluice != null) {
            sluice.close();
        }
    }

    private List<StoredMessage> messages(String stream) {
        return sluice.stream(stream).read(0, 10_000, Duration.ofSeconds(5));
    }

    private static Instant due(StoredMessage m) {
        return Instant.parse(m.headers().get("sluice-due-at"));
    }

    /** Moves the schedule's cursor back, as if every runner had been down since then. */
    private void downSince(TestDatabase db, String schedule, String sqlInstant) {
        db.execute("UPDATE " + q + ".schedule_cursor SET next_scheduled_at = " + sqlInstant + " WHERE schedule_id ="
                + " (SELECT id FROM " + q + ".schedule_config WHERE name = '" + schedule + "')");
    }

    private Instant dbNow() {
        return Instant.parse(cat.strings("SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')").get(0));
    }

    @Test
    void registerCreatesGetAndListReadAndRegisterAgainReplacesTheSpec(TestDatabase db) {
        client(db, "register");
        sluice.stream("ticks").register();
        Instant before = dbNow();
        ScheduleSpec hourly = ScheduleSpec.builder("@every 1h").toStream("ticks").payload("v1").build();

        ScheduleInfo created = sluice.schedule("hourly").register(hourly);

        assertThat(created.name()).isEqualTo("hourly");
        assertThat(created.spec()).isEqualTo(hourly);
        assertThat(created.suspended()).isFalse();
        assertThat(created.nextDueAt()).isAfter(before).isEqualTo(before.truncatedTo(ChronoUnit.HOURS).plus(Duration.ofHours(1)));
        assertThat(created.lastDueAt()).isNull();
        assertThat(created.fires()).isZero();
        assertThat(sluice.schedule("hourly").get()).contains(created);
        assertThat(sluice.schedules()).containsExactly(created);
        assertThat(sluice.schedule("other").get()).isEmpty();
        assertThat(cat.strings("SELECT concat_ws('|', system_id IS NULL, stream_id IS NOT NULL, target_kind, zone, misfire)"
                + " FROM " + q + ".schedule_config")).as("a stream target is owned by its stream")
                .containsExactly("t|t|stream|UTC|skip");

        ScheduleInfo samePace = sluice.schedule("hourly").register(hourly.toBuilder().payload("v2").build());
        assertThat(new String(samePace.spec().payload(), StandardCharsets.UTF_8)).isEqualTo("v2");
        assertThat(samePace.nextDueAt()).as("same expression: the cursor stays").isEqualTo(created.nextDueAt());

        ScheduleInfo toQueue = sluice.schedule("hourly").register(ScheduleSpec.cron("0 9 * * *").zone("Europe/Berlin")
                .toQueue("reports").catchUp(5).build());
        assertThat(toQueue.spec().target()).isEqualTo(ScheduleSpec.Target.queue("reports"));
        assertThat(toQueue.nextDueAt()).as("a new expression moves the cursor")
                .isEqualTo(dev.sluice.internal.schedule.DueTimes.parse("0 9 * * *", java.time.ZoneId.of("Europe/Berlin"))
                        .nextAfter(toQueue.updatedAt()));
        assertThat(cat.strings("SELECT concat_ws('|', system_id IS NOT NULL, stream_id IS NULL, target_kind, target_queue, zone,"
                + " misfire, catch_up_max) FROM " + q + ".schedule_config")).as("a queue target is owned by the system")
                .containsExactly("t|t|queue|reports|Europe/Berlin|catch_up|5");
        assertThat(cat.count("SELECT count(*) FROM " + q + ".schedule_cursor")).isEqualTo(1);
    }

    @Test
    void badInputIsRejectedWithACodeAndWritesNothing(TestDatabase db) {
        client(db, "bad");
        sluice.stream("small").register(StreamConfig.builder().maxPayloadBytes(4).build());
        ScheduleSpec spec = ScheduleSpec.builder("@every 1m").toStream("missing").build();

        assertCode(ErrorCode.STREAM_NOT_FOUND, () -> sluice.schedule("s").register(spec));
        assertCode(ErrorCode.INVALID_NAME, () -> sluice.schedule("Not Valid").register(spec));
        assertCode(ErrorCode.INVALID_NAME, () -> sluice.schedule("").get());
        assertCode(ErrorCode.PAYLOAD_TOO_LARGE, () -> sluice.schedule("s").register(
                ScheduleSpec.builder("@every 1m").toStream("small").payload("too long").build()));
        assertCode(ErrorCode.PAYLOAD_TOO_LARGE, () -> sluice.schedule("s").register(
                ScheduleSpec.builder("@every 1m").toQueue("jobs").payload(new byte[2 * 1024 * 1024], "x/y").build()));
        assertCode(ErrorCode.SCHEDULE_NOT_FOUND, () -> sluice.schedule("nope").suspend());
        assertCode(ErrorCode.SCHEDULE_NOT_FOUND, () -> sluice.schedule("nope").resume());
        assertCode(ErrorCode.SCHEDULE_NOT_FOUND, () -> sluice.schedule("nope").runNow());
        assertCode(ErrorCode.SCHEDULE_NOT_FOUND, () -> sluice.schedule("nope").destroy());

        assertThat(cat.count("SELECT count(*) FROM " + q + ".schedule_config")).isZero();
        assertThat(cat.count("SELECT count(*) FROM " + q + ".schedule_cursor")).isZero();
        assertThat(cat.count("SELECT count(*) FROM " + q + ".job")).isZero();
        assertThat(sluice.schedules()).isEmpty();
    }

    @Test
    void aFireLandsInTheStreamWithThePayloadAndAKeyFromTheDueTime(TestDatabase db) {
        client(db, "stream_fire");
        sluice.stream("ticks").register();
        sluice.schedule("tick").register(ScheduleSpec.builder("@every 1s").toStream("ticks")
                .payload("{\"n\":1}".getBytes(StandardCharsets.UTF_8), "application/json").build());

        try (ScheduleRunner runner = sluice.runSchedules()) {
            await().atMost(Duration.ofSeconds(20)).until(() -> messages("ticks").size() >= 2);
            assertThat(runner.isRunning()).isTrue();
            assertThat(runner.fires()).isGreaterThanOrEqualTo(2);
        }
        List<StoredMessage> log = messages("ticks");
        StoredMessage first = log.get(0);
        assertThat(first.payload()).asString(StandardCharsets.UTF_8).isEqualTo("{\"n\":1}");
        assertThat(first.contentType()).isEqualTo("application/json");
        assertThat(first.headers()).containsEntry("sluice-schedule", "tick");
        assertThat(due(first).getNano()).as("due times are whole seconds").isZero();
        assertThat(due(log.get(1))).isEqualTo(due(first).plusSeconds(1));

        // The idempotency key is derived from (schedule, due time): producing it again is a duplicate.
        String key = "schedule:tick:" + due(first);
        Produced again = sluice.stream("ticks").producer().produce("x".getBytes(StandardCharsets.UTF_8), ProduceOptions.idempotent(key));
        assertThat(again.duplicate()).isTrue();
        assertThat(again.id()).isEqualTo(first.id());
        ScheduleInfo info = sluice.schedule("tick").get().orElseThrow();
        assertThat(info.fires()).isEqualTo(messages("ticks").size());
        assertThat(info.lastDueAt()).isEqualTo(due(messages("ticks").get(messages("ticks").size() - 1)));
    }

    @Test
    void aFireLandsInTheQueueAsAJobWithAUniqueKeyFromTheDueTime(TestDatabase db) {
        client(db, "queue_fire");
        sluice.schedule("nudge").register(ScheduleSpec.builder("@every 1s").toQueue("nudges").payload("wake up").build());

        try (ScheduleRunner runner = sluice.runSchedules()) {
            await().atMost(Duration.ofSeconds(20)).until(() -> sluice.queue("nudges").admin().stats().pending() >= 1);
        }
        JobInfo job = sluice.queue("nudges").admin().jobs(JobState.PENDING, null, 100).items().get(0);
        Instant due = Instant.parse(job.headers().get("sluice-due-at"));
        assertThat(job.uniqueKey()).isEqualTo("schedule:nudge:" + due);
        assertThat(job.contentType()).startsWith("text/plain");
        assertThat(job.runAt()).as("ready at fire time").isBeforeOrEqualTo(job.createdAt());
        List<JobHandle<String>> claimed = sluice.queue("nudges", String.class).claim(1);
        assertThat(claimed.get(0).payload()).isEqualTo("wake up");
    }

    @Test
    void afterDowntimeOnlyTheNewestMissedDueTimeFires(TestDatabase db) {
        client(db, "downtime");
        sluice.stream("hours").register();
        sluice.schedule("hourly").register(ScheduleSpec.builder("@every 1h").toStream("hours").payload("h").build());
        downSince(db, "hourly", "date_trunc('hour', now()) - interval '5 hours'");

        try (ScheduleRunner runner = sluice.runSchedules()) {
            await().atMost(Duration.ofSeconds(20)).until(() -> messages("hours").size() >= 1);
            sleep(Duration.ofMillis(1500)); // the runner looks again: nothing else is due
        }
        ScheduleInfo info = sluice.schedule("hourly").get().orElseThrow();
        Instant newest = info.lastFiredAt().truncatedTo(ChronoUnit.HOURS);
        assertThat(messages("hours")).singleElement().satisfies(m -> assertThat(due(m)).isEqualTo(newest));
        assertThat(info.lastDueAt()).isEqualTo(newest);
        assertThat(info.nextDueAt()).isEqualTo(newest.plus(Duration.ofHours(1)));
        assertThat(info.fires()).isEqualTo(1);
    }

    @Test
    void catchUpFiresTheNewestMissedDueTimesUpToItsBoundOldestFirst(TestDatabase db) {
        client(db, "catchup");
        sluice.stream("hours").register();
        sluice.schedule("hourly").register(ScheduleSpec.builder("@every 1h").toStream("hours").catchUp(3).build());
        downSince(db, "hourly", "date_trunc('hour', now()) - interval '5 hours'");

        try (ScheduleRunner runner = sluice.runSchedules()) {
            await().atMost(Duration.ofSeconds(20)).until(() -> messages("hours").size() >= 3);
            sleep(Duration.ofMillis(1500));
        }
        Instant newest = sluice.schedule("hourly").get().orElseThrow().lastFiredAt().truncatedTo(ChronoUnit.HOURS);
        assertThat(messages("hours")).extracting(ScheduleTest::due).containsExactly(
                newest.minus(Duration.ofHours(2)), newest.minus(Duration.ofHours(1)), newest);
    }

    @Test
    void aSuspendedScheduleDoesNotFireAndResumeDropsTheMissedDueTimes(TestDatabase db) {
        client(db, "suspend");
        sluice.stream("ticks").register();
        sluice.schedule("tick").register(ScheduleSpec.builder("@every 1s").toStream("ticks").catchUp(100).build());
        assertThat(sluice.schedule("tick").suspend().suspended()).isTrue();

        try (ScheduleRunner runner = sluice.runSchedules()) {
            sleep(Duration.ofMillis(2500));
            assertThat(messages("ticks")).as("suspended").isEmpty();
            assertThat(sluice.schedule("tick").get().orElseThrow().nextDueAt()).as("missed while suspended").isBefore(dbNow());

            Instant resumedAt = dbNow();
            ScheduleInfo resumed = sluice.schedule("tick").resume();
            assertThat(resumed.suspended()).isFalse();
            assertThat(resumed.nextDueAt()).isAfter(resumedAt);
            await().atMost(Duration.ofSeconds(20)).until(() -> messages("ticks").size() >= 2);
            assertThat(messages("ticks")).as("even with catch-up, nothing from the suspended time")
                    .allSatisfy(m -> assertThat(due(m)).isAfter(resumedAt));
            assertThat(sluice.schedule("tick").resume().suspended()).as("resuming a running schedule changes nothing").isFalse();
        }
    }

    @Test
    void runNowFiresOnceUnderAKeyOfItsOwnAlsoWhileSuspended(TestDatabase db) {
        client(db, "run_now");
        ScheduleInfo registered = sluice.schedule("report").register(ScheduleSpec.cron("0 3 * * *").toQueue("reports")
                .payload("now").build());

        ScheduleFire fire = sluice.schedule("report").runNow();
        assertThat(fire.schedule()).isEqualTo("report");
        assertThat(fire.target()).isEqualTo(ScheduleSpec.Target.queue("reports"));
        assertThat(fire.key()).isEqualTo("schedule:report:now:" + fire.dueAt());
        assertThat(sluice.queue("reports").admin().job(fire.id())).get().satisfies(j -> assertThat(j.uniqueKey()).isEqualTo(fire.key()));

        sluice.schedule("report").suspend();
        ScheduleFire second = sluice.schedule("report").runNow();
        assertThat(second.id()).isNotEqualTo(fire.id());
        assertThat(second.key()).isNotEqualTo(fire.key());
        ScheduleInfo info = sluice.schedule("report").get().orElseThrow();
        assertThat(info.fires()).isEqualTo(2);
        assertThat(info.lastFiredAt()).isNotNull();
        assertThat(info.lastDueAt()).as("run-now is not a due time").isNull();
        assertThat(info.nextDueAt()).as("the cursor does not move").isEqualTo(registered.nextDueAt());
        assertThat(sluice.queue("reports").admin().stats().pending()).isEqualTo(2);
    }

    @Test
    void destroyRemovesTheScheduleAndDestroyingItsStreamDoesToo(TestDatabase db) {
        client(db, "destroy");
        sluice.stream("ticks").register();
        sluice.schedule("a").register(ScheduleSpec.builder("@every 1m").toQueue("jobs").build());
        sluice.schedule("b").register(ScheduleSpec.builder("@every 1m").toStream("ticks").build());

        sluice.schedule("a").destroy();
        assertThat(sluice.schedule("a").get()).isEmpty();
        assertCode(ErrorCode.SCHEDULE_NOT_FOUND, () -> sluice.schedule("a").destroy());
        assertThat(sluice.schedules()).extracting(ScheduleInfo::name).containsExactly("b");

        Sluice admin = Sluice.builder().dataSource(db.dataSource()).schema(sluice.schema()).allowDestroy(true).build();
        admin.stream("ticks").destroy(true);
        admin.close();
        assertThat(sluice.schedules()).as("a stream target owns its schedule").isEmpty();
        assertThat(cat.count("SELECT count(*) FROM " + q + ".schedule_cursor")).isZero();
    }

    @Test
    void theRunnerSurvivesDatabaseErrorsAndAFailingScheduleDoesNotHoldUpTheOthers(TestDatabase db) {
        client(db, "errors");
        sluice.stream("big").register();
        sluice.stream("ticks").register();
        sluice.schedule("broken").register(ScheduleSpec.builder("@every 1s").toStream("big").payload("0123456789").build());
        sluice.schedule("fine").register(ScheduleSpec.builder("@every 1s").toStream("ticks").build());
        // The stream now refuses the schedule's payload: every fire of 'broken' fails.
        sluice.stream("big").register(StreamConfig.builder().maxPayloadBytes(4).build());

        try (ScheduleRunner runner = sluice.runSchedules()) {
            await().atMost(Duration.ofSeconds(20)).until(() -> messages("ticks").size() >= 3);
            assertThat(messages("big")).isEmpty();

            db.execute("ALTER TABLE " + q + ".schedule_cursor RENAME TO schedule_cursor_away");
            sleep(Duration.ofMillis(1500));
            int during = messages("ticks").size();
            db.execute("ALTER TABLE " + q + ".schedule_cursor_away RENAME TO schedule_cursor");
            await().atMost(Duration.ofSeconds(30)).until(() -> messages("ticks").size() >= during + 2);
            assertThat(runner.isRunning()).isTrue();
        }
    }

    @Test
    void aDueTimeLockedByAnotherFirerIsSkippedThenTakenOverOnRollbackAndNotRepeatedAfterCommit(TestDatabase db) throws Exception {
        client(db, "interleave");
        sluice.stream("hours").register();
        for (String name : List.of("crashes", "commits")) {
            sluice.schedule(name).register(ScheduleSpec.builder("@every 1h").toStream("hours").payload(name).build());
            downSince(db, name, "date_trunc('hour', now())"); // due now
        }
        String cursor = q + ".schedule_cursor WHERE schedule_id = (SELECT id FROM " + q + ".schedule_config WHERE name = ?)";
        try (Connection crashes = db.connect(); Connection commits = db.connect()) {
            // Two other runners are firing the due times: they hold the cursor rows.
            for (Connection c : List.of(crashes, commits)) {
                c.setAutoCommit(false);
                try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM " + cursor + " FOR UPDATE")) {
                    ps.setString(1, c == crashes ? "crashes" : "commits");
                    ps.executeQuery().close();
                }
            }
            try (ScheduleRunner runner = sluice.runSchedules()) {
                sleep(Duration.ofMillis(1500));
                assertThat(messages("hours")).as("locked cursors are skipped").isEmpty();

                try (PreparedStatement ps = commits.prepareStatement("UPDATE " + q + ".schedule_cursor SET last_scheduled_at ="
                        + " next_scheduled_at, next_scheduled_at = next_scheduled_at + interval '1 hour' WHERE schedule_id ="
                        + " (SELECT id FROM " + q + ".schedule_config WHERE name = ?)")) {
                    ps.setString(1, "commits");
                    assertThat(ps.executeUpdate()).isEqualTo(1);
                }
                commits.commit(); // that firer's fire committed with its cursor move
                crashes.rollback(); // that firer died: nothing of its fire exists, the due time is due again

                await().atMost(Duration.ofSeconds(10)).until(() -> !messages("hours").isEmpty());
                sleep(Duration.ofMillis(1500));
            }
        }
        assertThat(messages("hours")).as("the rolled-back due time once, the committed one never again").singleElement()
                .satisfies(m -> assertThat(m.headers()).containsEntry("sluice-schedule", "crashes"));
    }

    @Test
    void anIdleRunnerCostsAboutOneShortTransactionPerSecond(TestDatabase db) {
        CountingDataSource counting = new CountingDataSource(db.dataSource());
        String schema = db.freshSchemaName("idle");
        sluice = Sluice.builder().dataSource(counting).schema(schema).build();
        sluice.schedule("later").register(ScheduleSpec.builder("@every 1h").toQueue("jobs").build());
        try (ScheduleRunner runner = sluice.runSchedules()) {
            sleep(Duration.ofMillis(500));
            int before = counting.opened();
            sleep(Duration.ofSeconds(3));
            assertThat(counting.opened() - before).as("connections in 3 idle seconds").isBetween(2, 6);
            assertThat(runner.fires()).isZero();
        }
    }

    @Test
    void closingTheClientStopsItsRunners(TestDatabase db) {
        client(db, "close");
        ScheduleRunner runner = sluice.runSchedules();
        assertThat(runner.isRunning()).isTrue();
        sluice.close();
        assertThat(runner.isRunning()).isFalse();
        sluice = null;
    }

    static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
