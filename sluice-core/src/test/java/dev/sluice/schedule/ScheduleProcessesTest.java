package dev.sluice.schedule;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.ScheduleInfo;
import dev.sluice.ScheduleSpec;
import dev.sluice.Sluice;
import dev.sluice.StoredMessage;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The exactly-once claim across processes: three separate JVMs run schedule runners against one database for
 * two minutes on an {@code @every 1s} schedule into a stream; one of them is killed (SIGKILL) half way and
 * replaced. Every due time between the first and the last fire lands exactly once, and no fire was saved
 * only by the idempotency key (the runners' fire counts add up to the messages).
 */
@SluiceTest
class ScheduleProcessesTest {
    private static final Duration RUN = Duration.ofSeconds(120);

    @Test
    void threeProcessesFireEachDueTimeExactlyOnce(TestDatabase db, @TempDir Path logs) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            sluice.stream("ticks").register();
            // catch-up: a runner starved of CPU for over a second on a busy machine must not make a gap.
            sluice.schedule("tick").register(ScheduleSpec.builder("@every 1s").toStream("ticks").catchUp(60)
                    .payload("tick").build());

            List<Process> procs = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                procs.add(spawn(db, "runner-" + i, RUN, logs));
            }
            Thread.sleep(RUN.toMillis() / 2);
            Process victim = procs.get(0);
            victim.destroyForcibly(); // SIGKILL: a fire in progress rolls back, another process takes it over
            victim.waitFor(30, TimeUnit.SECONDS);
            procs.add(spawn(db, "runner-3", RUN.dividedBy(2), logs));

            long fires = 0;
            for (Process p : procs.subList(1, procs.size())) {
                assertThat(p.waitFor(RUN.toSeconds() + 60, TimeUnit.SECONDS)).as("runner exited").isTrue();
            }
            for (int i = 1; i <= 3; i++) {
                String out = Files.readString(logs.resolve("runner-" + i + ".log"), StandardCharsets.UTF_8);
                assertThat(out).as("runner-" + i + " log:\n" + out).contains("fires=");
                fires += Long.parseLong(out.substring(out.lastIndexOf("fires=") + 6).strip());
            }

            List<StoredMessage> log = new ArrayList<>();
            long after = 0;
            while (true) {
                List<StoredMessage> page = sluice.stream("ticks").read(after, 1000, Duration.ofSeconds(5));
                if (page.isEmpty()) {
                    break;
                }
                log.addAll(page);
                after = page.get(page.size() - 1).id();
            }
            List<Instant> due = log.stream().map(m -> Instant.parse(m.headers().get("sluice-due-at"))).sorted().toList();
            Set<Instant> distinct = new HashSet<>(due);
            assertThat(distinct).as("no due time fired twice").hasSize(due.size());
            assertThat(due.size()).as("about two minutes of seconds").isGreaterThan(100);
            Instant first = due.get(0);
            Instant last = due.get(due.size() - 1);
            assertThat(due.size()).as("no gap between the first fire (%s) and the last (%s)", first, last)
                    .isEqualTo(Duration.between(first, last).toSeconds() + 1);
            ScheduleInfo info = sluice.schedule("tick").get().orElseThrow();
            // The killed runner's fires are not counted by it, so the survivors' count is a lower bound.
            assertThat(fires).as("fires the survivors counted").isLessThanOrEqualTo(due.size());
            assertThat(info.fires()).as("the cursor's count: every fire made one message, none deduplicated")
                    .isEqualTo(due.size());
        }
    }

    private static Process spawn(TestDatabase db, String name, Duration runFor, Path logs) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder pb = new ProcessBuilder(java, "-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp",
                System.getProperty("java.class.path"), ScheduleRunnerProcess.class.getName(), db.schema(), name,
                Long.toString(runFor.toMillis()));
        pb.environment().put(ScheduleRunnerProcess.URL_VARIABLE, db.jdbcUrl());
        pb.redirectErrorStream(true);
        pb.redirectOutput(logs.resolve(name + ".log").toFile());
        return pb.start();
    }
}
