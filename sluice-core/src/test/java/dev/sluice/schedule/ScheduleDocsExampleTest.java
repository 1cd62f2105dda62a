package dev.sluice.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.ScheduleFire;
import dev.sluice.ScheduleInfo;
import dev.sluice.ScheduleRunner;
import dev.sluice.ScheduleSpec;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The examples of docs/schedules.md, kept compiling and passing. */
@SluiceTest
class ScheduleDocsExampleTest {
    record ReportRequest(String kind) {
    }

    @Test
    void schedulesPageExamplesRun(TestDatabase db) {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            sluice.stream("ticks").register();

            sluice.schedule("morning-report").register(ScheduleSpec.cron("0 9 * * MON-FRI").zone("Europe/Berlin")
                    .toQueue("reports").payload(new ReportRequest("daily")).build());
            sluice.schedule("tick").register(ScheduleSpec.every(Duration.ofSeconds(5)).toStream("ticks")
                    .payload("tick").build());

            try (ScheduleRunner runner = sluice.runSchedules()) {
                await().atMost(Duration.ofSeconds(30)).until(() -> runner.fires() >= 1);
            }
            assertThat(sluice.stream("ticks").read(0, 10, Duration.ofSeconds(5))).isNotEmpty();

            ScheduleSpec spec = sluice.schedule("tick").get().orElseThrow().spec();
            ScheduleInfo info = sluice.schedule("tick").register(spec);
            Optional<ScheduleInfo> one = sluice.schedule("tick").get();
            List<ScheduleInfo> all = sluice.schedules();
            assertThat(one).contains(info);
            assertThat(all).extracting(ScheduleInfo::name).containsExactly("morning-report", "tick");

            sluice.schedule("tick").suspend();
            sluice.schedule("tick").resume();
            ScheduleFire fire = sluice.schedule("tick").runNow();
            assertThat(fire.key()).startsWith("schedule:tick:now:");
            sluice.schedule("tick").destroy();
            assertThat(sluice.schedules()).extracting(ScheduleInfo::name).containsExactly("morning-report");
        }
    }
}
