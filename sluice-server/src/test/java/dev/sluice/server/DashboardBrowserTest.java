package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.DeadLetter;
import dev.sluice.GroupConfig;
import dev.sluice.GroupInfo;
import dev.sluice.JobHandle;
import dev.sluice.JobState;
import dev.sluice.MetricSnapshot;
import dev.sluice.Outcome;
import dev.sluice.ProduceOptions;
import dev.sluice.Producer;
import dev.sluice.Queue;
import dev.sluice.QueueOptions;
import dev.sluice.ScheduleSpec;
import dev.sluice.Sluice;
import dev.sluice.TokenRole;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;

/**
 * The dashboard in a real browser (Debian's headless Chromium through chromedriver) over a server on a free
 * loopback port: overview → group → redrive a dead letter through the confirmation dialog, rewind; queue → revive
 * a dead job; schedules → suspend, run now, resume; every page screenshotted (light, dark and phone width) to {@code target/screenshots/}. Each action is
 * checked on the page and through the Java API. Without the browser it skips, except under CI=true, where it
 * fails: CI installs the packages.
 */
@SluiceTest
class DashboardBrowserTest {
    private static final String STREAM = "orders";
    private static final String GROUP = "billing";
    private static final String QUEUE = "emails";
    /** Hostile text in a dead letter's error: it must show as text, never become markup. */
    private static final String HOSTILE = "<img src=x data-hostile=1> <b>refused</b> & \"quoted\"";

    static Sluice sluice;
    static SluiceServer server;
    static long deadJob;
    /** Started while the data is prepared (a browser takes seconds to start). */
    static java.util.concurrent.CompletableFuture<Browser> browser;
    static final long T0 = System.nanoTime();

    private static void log(String step) {
        System.out.printf("dashboard test: %s at %d ms%n", step, (System.nanoTime() - T0) / 1_000_000);
    }

    @BeforeAll
    static void start(TestDatabase db) {
        boolean present = Files.isExecutable(Browser.CHROMIUM) && Files.isExecutable(Browser.CHROMEDRIVER);
        if (!present) {
            String why = Browser.CHROMIUM + " and " + Browser.CHROMEDRIVER + " are needed (apt-get install chromium chromium-driver)";
            if ("true".equalsIgnoreCase(System.getenv("CI"))) {
                fail("CI=true and the dashboard's browser test cannot run: " + why);
            }
            assumeTrue(false, why);
        }
        browser = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            try {
                return new Browser(screenshots());
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        log("class started");
        sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(true)
                .maintenanceInterval(Duration.ofSeconds(1)).build();
        sluice.system().register();
        prepare();
        log("data prepared");
        server = SluiceServer.builder(sluice).port(0).historyInterval(Duration.ofMillis(200)).start();
    }

    @AfterAll
    static void stop() {
        if (browser != null) {
            browser.thenAccept(Browser::close).exceptionally(e -> null).join();
        }
        if (server != null) {
            server.close();
        }
        if (sluice != null) {
            sluice.close();
        }
    }

    /** A stream whose group has three dead letters, a second group, a queue with a dead job, a schedule, a lock. */
    private static void prepare() {
        sluice.stream(STREAM).register();
        ConsumerGroup<String> billing = sluice.stream(STREAM, String.class).consumerGroup(GROUP);
        billing.register(GroupConfig.builder().build());
        sluice.stream(STREAM, String.class).consumerGroup("audit").register(GroupConfig.builder().build());
        try (Producer<String> p = sluice.stream(STREAM, String.class).producer()) {
            for (int i = 1; i <= 12; i++) {
                p.produce("{\"order\": " + i + (i % 4 == 0 ? ", \"bad\": true" : "") + "}", ProduceOptions.key("customer-" + i));
            }
        }
        Consumption c = billing.consume(m -> m.payload().contains("bad") ? Outcome.terminal(HOSTILE) : Outcome.success());
        Consumption a = sluice.stream(STREAM, String.class).consumerGroup("audit").consume(m -> Outcome.success());
        try (c; a) {
            await().atMost(Duration.ofSeconds(20)).until(() -> {
                GroupInfo g = billing.get().orElseThrow();
                GroupInfo au = sluice.stream(STREAM).consumerGroup("audit").get().orElseThrow();
                return g.dead() == 3 && g.lag() == 0 && au.lag() == 0;
            });
        }
        Queue<String> emails = sluice.queue(QUEUE, String.class, QueueOptions.builder().maxAttempts(1).build());
        deadJob = emails.enqueue("bounce@example.com");
        emails.enqueue("later@example.com", dev.sluice.EnqueueOptions.builder().delay(Duration.ofHours(1)).build());
        List<JobHandle<String>> claimed = emails.claim(1, Duration.ofSeconds(5));
        assertThat(claimed).extracting(JobHandle::id).containsExactly(deadJob);
        assertThat(claimed.get(0).terminal("mailbox does not exist")).isTrue();
        log("dead letters made");
        sluice.schedule("nightly-report").register(ScheduleSpec.cron("0 3 * * *").toQueue(QUEUE).payload("report").build());
        sluice.lock("reports-leader").tryAcquire(Duration.ofMinutes(5)).orElseThrow();
        // the overview's group figures are the manager's snapshots: wait for one that has the dead letters
        await().atMost(Duration.ofSeconds(20)).until(() -> sluice.maintenance().metrics().stream()
                .anyMatch(s -> s.kind().equals("group") && s.name().equals(STREAM + "/" + GROUP) && Long.valueOf(3).equals(s.dead())));
    }

    private static Path screenshots() {
        return Path.of(System.getProperty("basedir", "."), "target", "screenshots");
    }

    @Test
    void redrivesADeadLetterAndRevivesADeadJobThroughTheDashboard() throws Exception {
        ConsumerGroup<byte[]> billing = sluice.stream(STREAM).consumerGroup(GROUP);
        Queue<byte[]> emails = sluice.queue(QUEUE);
        Browser b = browser.join();
        log("browser started");
        b.driver.get(server.url());
        // overview: the open-mode role, streams, the group with its dead letters, the queue
        b.waitText("#role-pill", "admin · open mode");
        b.waitFor("[data-test=streams-table] tr[data-name='" + STREAM + "']");
        b.waitFor("[data-test=groups-table] tr[data-name='" + STREAM + "/" + GROUP + "']");
        b.waitFor("[data-test=queues-table] tr[data-name='" + QUEUE + "']");
        b.waitText("[data-test=stat-dead] .stat-value", "3");
        b.waitText("[data-test=stat-dead-jobs] .stat-value", "1");
        b.shot("overview");
        log("overview shot");

        // the stream: config, groups, recent messages, chart
        b.click("[data-test=streams-table] tr[data-name='" + STREAM + "'] a");
        b.waitFor("[data-test=stream-groups-table] tr[data-name='" + GROUP + "']");
        b.until("12 messages", d -> b.count("[data-test=messages-table] tr[data-id]") == 12);
        b.waitFor("svg[data-test=stream-chart]");
        b.shot("stream");

        // the group: three dead letters, shown as text however hostile
        b.click("[data-test=stream-groups-table] tr[data-name='" + GROUP + "'] a");
        b.waitText("[data-test=group-dead-count] .stat-value", "3");
        b.until("three dead rows", d -> b.count("[data-test=dead-letters-table] tr[data-test=dead-row]") == 3);
        assertThat(b.text("[data-test=dead-letters-table] tr[data-test=dead-row] td.error-text")).isEqualTo(HOSTILE);
        assertThat(b.count("[data-hostile], [data-test=dead-letters-table] td b")).isZero();
        b.waitFor("svg[data-test=group-lag-chart]");
        b.shot("group");
        log("group shot");

        List<Long> ids = billing.admin().deadLetters(null, 10).items().stream().map(DeadLetter::messageId).toList();
        assertThat(ids).hasSize(3);
        long first = ids.get(0);
        String row = "[data-test=dead-letters-table] tr[data-id='" + first + "']";

        // a cancelled confirmation changes nothing (and the poller keeps the row)
        b.click(row + " button[data-test=purge]");
        b.waitFor("#confirm-dialog[open]");
        assertThat(b.text("#confirm-title")).isEqualTo("Purge message " + first + "?");
        b.click("#confirm-cancel");
        b.waitGone("#confirm-dialog[open]");
        b.waitPollAfter(b.now());
        assertThat(b.count(row)).isEqualTo(1);
        assertThat(billing.get().orElseThrow().dead()).isEqualTo(3);

        // redrive one: confirm in the dialog, it leaves the list and the dead count drops
        b.click(row + " button[data-test=redrive]");
        WebElement dialog = b.waitFor("#confirm-dialog[open]");
        assertThat(dialog.findElement(By.id("confirm-title")).getText()).isEqualTo("Redrive message " + first + "?");
        b.shot("group-confirm");
        b.click("#confirm-ok");
        b.waitGone("#confirm-dialog[open]");
        b.waitGone(row);
        b.waitText("[data-test=group-dead-count] .stat-value", "2");
        b.waitText("[data-test=group-ready] .stat-value", "1");
        assertThat(b.text("#toast")).isEqualTo("Redrove 1 dead letter");
        GroupInfo after = billing.get().orElseThrow();
        assertThat(after.dead()).isEqualTo(2);
        assertThat(after.ready()).isEqualTo(1);
        assertThat(billing.admin().deadLetters(null, 10).items()).extracting(DeadLetter::messageId)
                .containsExactlyElementsOf(ids.subList(1, 3));

        // rewind to the first message: the cursor moves back, the dead letters stay
        b.waitFor("#rewind-to").sendKeys("1");
        b.click("button[data-test=rewind]");
        b.waitFor("#confirm-dialog[open]");
        assertThat(b.text("#confirm-text")).isEqualTo("The cursor moves to message id 1.");
        b.click("#confirm-ok");
        b.waitText("[data-test=group-lag] .stat-value", "12");
        b.waitText("[data-test=group-committed] .stat-value", "0");
        assertThat(billing.get().orElseThrow().lag()).isEqualTo(12);
        assertThat(billing.get().orElseThrow().dead()).isEqualTo(2);

        // the queue: its dead job revived
        b.go("#/");
        b.click("[data-test=queues-table] tr[data-name='" + QUEUE + "'] a");
        b.waitText("[data-test=queue-dead-count] .stat-value", "1");
        b.waitText("[data-test=queue-scheduled] .stat-value", "1");
        String jobRow = "[data-test=dead-jobs-table] tr[data-id='" + deadJob + "']";
        b.waitFor(jobRow);
        b.shot("queue");
        log("queue shot");
        b.click(jobRow + " button[data-test=revive]");
        b.waitFor("#confirm-dialog[open]");
        assertThat(b.text("#confirm-title")).isEqualTo("Revive job " + deadJob + "?");
        b.click("#confirm-ok");
        b.waitGone(jobRow);
        b.waitText("[data-test=queue-dead-count] .stat-value", "0");
        b.waitText("[data-test=queue-due] .stat-value", "1");
        b.waitFor("[data-test=jobs-table] tr[data-id='" + deadJob + "']");
        assertThat(emails.admin().deadLetters(null, 10).items()).isEmpty();
        assertThat(emails.admin().job(deadJob).orElseThrow().state()).isEqualTo(JobState.PENDING);

        // schedules, locks, the fleet
        b.click("[data-test=nav-schedules]");
        b.waitFor("[data-test=schedules-table] tr[data-name='nightly-report'] button[data-test=schedule-run]");
        b.shot("schedules");
        String schedule = "[data-test=schedules-table] tr[data-name='nightly-report'] ";
        b.click(schedule + "button[data-test=schedule-suspend]");
        b.waitFor("#confirm-dialog[open]");
        b.click("#confirm-ok");
        b.waitFor(schedule + "button[data-test=schedule-resume]");
        assertThat(sluice.schedule("nightly-report").get().orElseThrow().suspended()).isTrue();
        int jobs = emails.admin().jobs(JobState.PENDING, null, 100).items().size();
        b.click(schedule + "button[data-test=schedule-run]");
        b.waitFor("#confirm-dialog[open]");
        b.click("#confirm-ok");
        b.until("the fire's toast", d -> b.text("#toast").startsWith("Fired nightly-report"));
        assertThat(emails.admin().jobs(JobState.PENDING, null, 100).items()).hasSize(jobs + 1);
        b.click(schedule + "button[data-test=schedule-resume]");
        b.waitFor("#confirm-dialog[open]");
        b.click("#confirm-ok");
        b.waitFor(schedule + "button[data-test=schedule-suspend]");
        assertThat(sluice.schedule("nightly-report").get().orElseThrow().suspended()).isFalse();
        b.click("[data-test=nav-locks]");
        b.waitFor("[data-test=locks-table] tr[data-name='reports-leader']");
        b.shot("locks");
        b.click("[data-test=nav-fleet]");
        b.waitFor("[data-test=fleet-workers-table] tr[data-key='manager']");
        b.waitFor("[data-test=sweeps-table] tbody tr:not(.empty)");
        b.shot("fleet");
        log("fleet shot");

        // the dark theme, remembered across a reload
        b.click("#theme-toggle");
        b.until("the dark theme", d -> "dark".equals(d.findElement(By.tagName("html")).getAttribute("data-theme")));
        b.go("#/groups/" + STREAM + "/" + GROUP);
        b.until("two dead rows", d -> b.count("[data-test=dead-letters-table] tr[data-test=dead-row]") == 2);
        b.shot("group-dark");
        b.go("#/");
        b.waitFor("[data-test=groups-table] tr[data-name='" + STREAM + "/" + GROUP + "']");
        b.shot("overview-dark");
        b.driver.navigate().refresh();
        b.until("the dark theme after a reload", d -> "dark".equals(d.findElement(By.tagName("html")).getAttribute("data-theme")));
        b.click("#theme-toggle");
        b.until("the light theme", d -> "light".equals(d.findElement(By.tagName("html")).getAttribute("data-theme")));

        // phone width: the page fits (tables scroll inside their boxes)
        b.viewport(390, true);
        b.go("#/streams/" + STREAM);
        b.go("#/");
        b.waitFor("[data-test=groups-table] tr[data-name='" + STREAM + "/" + GROUP + "']");
        assertThat(pageWidth(b)).isLessThanOrEqualTo(390);
        b.shot("overview-phone");
        b.go("#/groups/" + STREAM + "/" + GROUP);
        b.until("two dead rows", d -> b.count("[data-test=dead-letters-table] tr[data-test=dead-row]") == 2);
        assertThat(pageWidth(b)).isLessThanOrEqualTo(390);
        b.shot("group-phone");
        log("group-phone shot");
        b.viewport(1280, false);

        // a read token: admin actions are disabled, with the reason
        String secret = sluice.tokens().create(TokenRole.READ, "dashboard-reader").secret();
        b.driver.navigate().refresh();
        b.waitFor("#error-banner[data-code=UNAUTHORIZED]");
        b.click("#token-toggle");
        b.waitFor("#token-input").sendKeys(secret);
        b.click("#token-save");
        b.waitText("#role-pill", "read");
        b.until("two dead rows", d -> b.count("[data-test=dead-letters-table] tr[data-test=dead-row]") == 2);
        b.waitFor("[data-test=admin-hint]");
        for (WebElement button : b.driver.findElements(By.cssSelector("#app button[data-admin]"))) {
            assertThat(button.isEnabled()).as(button.getText()).isFalse();
            assertThat(button.getAttribute("title")).contains("admin role");
        }
        assertThat(billing.get().orElseThrow().dead()).isEqualTo(2);
        // no script failed and the content policy refused nothing (no inline script, style or handler)
        assertThat(b.scriptErrors()).isEmpty();
    }

    private static long pageWidth(Browser b) {
        return ((Number) b.driver.executeScript("return document.documentElement.scrollWidth")).longValue();
    }
}
