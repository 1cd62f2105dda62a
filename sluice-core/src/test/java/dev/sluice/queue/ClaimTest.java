package dev.sluice.queue;

import static dev.sluice.queue.QueueFixture.assertCode;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.sluice.DeadJob;
import dev.sluice.DeadReason;
import dev.sluice.EnqueueOptions;
import dev.sluice.ErrorCode;
import dev.sluice.JobHandle;
import dev.sluice.JobInfo;
import dev.sluice.JobState;
import dev.sluice.NewJob;
import dev.sluice.Page;
import dev.sluice.Queue;
import dev.sluice.QueueMaintenanceReport;
import dev.sluice.QueueOptions;
import dev.sluice.QueueStats;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Claims and handles: order, delays, validity of stale handles, retry/backoff/dead, expiry, rescue, revive, operators. */
@SluiceTest
class ClaimTest {
    static Sluice sluice;
    static QueueFixture rows;
    /** Short backoffs so that retried jobs are due again quickly. */
    static final QueueOptions FAST = QueueOptions.builder().backoffBase(Duration.ofMillis(1)).maxBackoff(Duration.ofMillis(1))
            .build();

    @BeforeAll
    static void setUp(TestDatabase db) {
        sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build();
        sluice.system().register();
        rows = new QueueFixture(db);
    }

    @AfterAll
    static void tearDown() {
        sluice.close();
    }

    @Test
    void claimOrderIsPriorityThenRunAtThenId() {
        Queue<String> q = sluice.queue("order", String.class);
        Instant t0 = Instant.parse("2024-01-01T00:00:00Z");
        q.enqueue("p0-late", EnqueueOptions.builder().runAt(t0.plusSeconds(20)).build());
        q.enqueue("p0-early-a", EnqueueOptions.builder().runAt(t0).build());
        q.enqueue("p0-early-b", EnqueueOptions.builder().runAt(t0).build());
        q.enqueue("p5-late", EnqueueOptions.builder().priority(5).runAt(t0.plusSeconds(30)).build());
        q.enqueue("p5-early", EnqueueOptions.builder().priority(5).runAt(t0.plusSeconds(10)).build());
        q.enqueue("pm3", EnqueueOptions.builder().priority(-3).runAt(t0.minusSeconds(100)).build());
        q.enqueue("p9-future", EnqueueOptions.builder().priority(9).delay(Duration.ofHours(1)).build());
        q.enqueue("p1-now", EnqueueOptions.priority(1));
        List<String> expected = List.of("p5-early", "p5-late", "p1-now", "p0-early-a", "p0-early-b", "p0-late", "pm3");

        // The listing shows what a claim would take, in the same order (the delayed job included).
        assertThat(q.admin().jobs(JobState.PENDING, null, 100).items()).extracting(JobInfo::priority)
                .containsExactly(9, 5, 5, 1, 0, 0, 0, -3);

        List<String> claimed = new ArrayList<>();
        List<JobHandle<String>> first = q.claim(3);
        first.forEach(h -> claimed.add(h.payload()));
        q.claim(10).forEach(h -> claimed.add(h.payload()));
        assertThat(claimed).containsExactlyElementsOf(expected);
        assertThat(q.claim(10)).as("the delayed job is not due").isEmpty();
        first.forEach(JobHandle::ack);
        rows.exec("DELETE FROM " + rows.q + ".job WHERE queue = 'order'");
    }

    @Test
    void delayedJobsAreInvisibleUntilDue() {
        Queue<String> q = sluice.queue("delayed", String.class);
        long id = q.enqueue("later", EnqueueOptions.delay(Duration.ofMillis(700)));
        assertThat(q.claim(10)).isEmpty();
        assertThat(q.admin().stats()).isEqualTo(new QueueStats(1, 1, 0, 0));
        List<JobHandle<String>> got = new ArrayList<>();
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() -> {
            got.addAll(q.claim(10));
            return !got.isEmpty();
        });
        assertThat(got).singleElement().satisfies(h -> assertThat(h.id()).isEqualTo(id));
        // Claimed no earlier than due, by the database clock.
        assertThat(rows.scalar("SELECT count(*) FROM " + rows.q + ".job WHERE id = ? AND claimed_at >= run_at"
                + " AND run_at >= created_at + interval '700 milliseconds'", id)).isEqualTo(1);
        assertThat(got.get(0).ack()).isTrue();
    }

    @Test
    void aClaimMarksTheRowProcessingWithWorkerTokenExpiryAndACountedAttempt() {
        Queue<String> q = sluice.queue("claim-row", String.class,
                QueueOptions.builder().visibilityTimeout(Duration.ofSeconds(12)).build());
        long id = q.enqueue("x", EnqueueOptions.builder().header("h", "v").uniqueKey("u").build());
        JobHandle<String> h = q.claim(1).get(0);
        Map<String, Object> row = rows.job(id);
        assertThat(row.get("state")).isEqualTo("processing");
        assertThat(row.get("worker_id")).isEqualTo(sluice.clientId());
        assertThat(row.get("attempts")).isEqualTo(1);
        assertThat(row.get("claim_token")).isNotNull();
        assertThat(rows.seconds("SELECT extract(epoch FROM claim_expires_at - claimed_at) FROM " + rows.q + ".job WHERE id = ?", id))
                .isEqualTo(12.0);
        assertThat(h.attempt()).isEqualTo(1);
        assertThat(h.maxAttempts()).isEqualTo(25);
        assertThat(h.headers()).containsEntry("h", "v");
        assertThat(h.uniqueKey()).isEqualTo("u");
        assertThat(h.claimExpiresAt()).isEqualTo(((java.sql.Timestamp) row.get("claim_expires_at")).toInstant());
        assertThat(q.claim(1)).as("a processing job is not claimed twice").isEmpty();
        assertThat(h.heartbeat()).isTrue();
        assertThat(h.claimExpiresAt()).isAfterOrEqualTo(((java.sql.Timestamp) row.get("claim_expires_at")).toInstant());
        assertThat(h.ack()).isTrue();
        assertThat(rows.job(id)).as("ack deletes the row").isNull();
        assertThat(h.ack()).isFalse();
    }

    @Test
    void aLostClaimMakesEveryHandleMethodReturnFalseAndChangeNothing() {
        Queue<String> q = sluice.queue("lost", String.class, FAST);
        long id = q.enqueue("x");
        JobHandle<String> stale = q.claim(1).get(0);

        // Expired but not yet rescued: the stale holder is already refused.
        rows.expireClaim(id);
        Map<String, Object> expired = rows.job(id);
        assertThat(stale.heartbeat()).isFalse();
        assertThat(stale.ack()).isFalse();
        assertThat(rows.job(id)).isEqualTo(expired);

        // Rescued (attempt stays counted) and claimed by another worker.
        QueueMaintenanceReport report = q.admin().maintain();
        assertThat(report.rescued()).isEqualTo(1);
        assertThat(rows.job(id)).satisfies(r -> {
            assertThat(r.get("state")).isEqualTo("pending");
            assertThat(r.get("attempts")).isEqualTo(1);
            assertThat((String) r.get("last_error")).startsWith("claim expired: worker " + sluice.clientId());
        });
        rows.makeDue(id);
        JobHandle<String> current = q.claim(1).get(0);
        assertThat(current.attempt()).isEqualTo(2);
        Map<String, Object> before = rows.job(id);

        assertThat(stale.ack()).isFalse();
        assertThat(stale.retry()).isFalse();
        assertThat(stale.retry(Duration.ofSeconds(5))).isFalse();
        assertThat(stale.fail(new IllegalStateException("late"))).isFalse();
        assertThat(stale.fail("late")).isFalse();
        assertThat(stale.terminal("late")).isFalse();
        assertThat(stale.heartbeat()).isFalse();
        assertThat(rows.job(id)).as("nothing changed").isEqualTo(before);
        assertThat(rows.dead(id)).isNull();

        assertThat(current.ack()).isTrue();
        assertThat(rows.job(id)).isNull();
    }

    @Test
    void failuresBackOffExponentiallyUpToTheCapThenGoDeadWithTheLastError() {
        Queue<String> q = sluice.queue("backoff", String.class, QueueOptions.builder().maxAttempts(3)
                .backoffBase(Duration.ofSeconds(1)).maxBackoff(Duration.ofMillis(1500)).build());
        long id = q.enqueue("x");

        JobHandle<String> a1 = q.claim(1).get(0);
        assertThat(a1.fail(new IllegalStateException("first boom"))).isTrue();
        assertThat(waitSeconds(id)).as("attempt 1 waits base, minus up to 10 %").isBetween(0.9, 1.0);
        assertThat((String) rows.job(id).get("last_error")).startsWith("java.lang.IllegalStateException: first boom")
                .contains("at dev.sluice.queue.ClaimTest");
        assertThat(rows.job(id).get("claim_token")).isNull();

        rows.makeDue(id);
        JobHandle<String> a2 = q.claim(1).get(0);
        assertThat(a2.attempt()).isEqualTo(2);
        assertThat(a2.fail("second boom")).isTrue();
        assertThat(waitSeconds(id)).as("attempt 2 would wait 2 s; capped at 1.5 s").isBetween(1.35, 1.5);

        rows.makeDue(id);
        JobHandle<String> a3 = q.claim(1).get(0);
        assertThat(a3.fail("third boom")).isTrue();
        assertThat(rows.job(id)).isNull();
        Map<String, Object> dead = rows.dead(id);
        assertThat(dead.get("reason")).isEqualTo("failed");
        assertThat(dead.get("last_error")).isEqualTo("third boom");
        assertThat(dead.get("attempts")).isEqualTo(3);
        assertThat(dead.get("payload")).isEqualTo("x");
        assertThat(rows.seconds("SELECT extract(epoch FROM purge_after - died_at) FROM " + rows.q + ".job_dead WHERE id = ?", id))
                .isEqualTo(Duration.ofDays(7).toSeconds());
        assertThat(q.admin().deadLetters(null, 10).items()).singleElement().satisfies(d -> {
            assertThat(d.id()).isEqualTo(id);
            assertThat(d.reason()).isEqualTo(DeadReason.FAILED);
            assertThat(d.lastError()).isEqualTo("third boom");
        });
        assertThat(a3.ack()).isFalse();
    }

    @Test
    void retryWithADelayKeepsTheAttemptCountedAndOnTheLastAttemptGoesDead() {
        Queue<String> q = sluice.queue("retry", String.class, QueueOptions.builder().maxAttempts(2).build());
        long id = q.enqueue("x");
        assertThat(q.claim(1).get(0).retry(Duration.ofSeconds(30))).isTrue();
        assertThat(waitSeconds(id)).isEqualTo(30.0);
        assertThat(rows.job(id).get("attempts")).isEqualTo(1);
        rows.makeDue(id);
        JobHandle<String> last = q.claim(1).get(0);
        assertThat(last.retry()).isTrue();
        assertThat(rows.dead(id)).satisfies(d -> {
            assertThat(d.get("reason")).isEqualTo("failed");
            assertThat((String) d.get("last_error")).isEqualTo("retry requested after attempt 2");
        });
    }

    @Test
    void discardMovesToDeadAtOnce() {
        Queue<String> q = sluice.queue("discard", String.class);
        long id = q.enqueue("x");
        assertThat(q.claim(1).get(0).terminal("customer deleted")).isTrue();
        assertThat(rows.dead(id)).satisfies(d -> {
            assertThat(d.get("reason")).isEqualTo("discarded");
            assertThat(d.get("last_error")).isEqualTo("customer deleted");
            assertThat(d.get("attempts")).isEqualTo(1);
        });
    }

    @Test
    void anExpiredClaimOnTheLastAttemptIsRescuedToDead() {
        Queue<String> q = sluice.queue("rescue-dead", String.class, QueueOptions.builder().maxAttempts(1).build());
        long id = q.enqueue("x");
        JobHandle<String> h = q.claim(1).get(0);
        rows.expireClaim(id);
        QueueMaintenanceReport r = q.admin().maintain();
        assertThat(r.rescuedToDead()).isEqualTo(1);
        assertThat(rows.dead(id)).satisfies(d -> {
            assertThat(d.get("reason")).isEqualTo("claim_expired");
            assertThat((String) d.get("last_error")).contains("stopped heart-beating");
        });
        assertThat(h.ack()).isFalse();
    }

    @Test
    void unclaimedJobsPastTheirExpiryGoDeadWithReasonExpired() {
        Queue<String> q = sluice.queue("expiry", String.class);
        long stale = q.enqueue("too late", EnqueueOptions.builder().expiresAt(Instant.now().minusSeconds(1)).build());
        long running = q.enqueue("running", EnqueueOptions.builder().expiresAt(Instant.now().plusSeconds(3600)).build());
        long fresh = q.enqueue("fine", EnqueueOptions.builder().expiresAt(Instant.now().plusSeconds(3600)).build());
        JobHandle<String> h = q.claim(1).get(0);
        assertThat(h.id()).as("an expired job is never claimed").isEqualTo(running);
        // A job that expires while it runs is not interrupted.
        rows.exec("UPDATE " + rows.q + ".job SET expires_at = now() - interval '1 second' WHERE id = ?", running);

        assertThat(q.admin().maintain().expired()).isEqualTo(1);
        assertThat(rows.dead(stale)).satisfies(d -> {
            assertThat(d.get("reason")).isEqualTo("expired");
            assertThat((String) d.get("last_error")).startsWith("expired unclaimed at");
            assertThat(d.get("attempts")).isEqualTo(0);
        });
        assertThat(rows.job(fresh).get("state")).isEqualTo("pending");
        assertThat(h.ack()).isTrue();
        assertThat(q.admin().deadLetters(null, 10).items()).extracting(DeadJob::reason).containsExactly(DeadReason.EXPIRED);
    }

    @Test
    void reviveMovesADeadJobBackWithItsIdAndAttemptsReset() {
        Queue<String> q = sluice.queue("revive", String.class, QueueOptions.builder().maxAttempts(1).build());
        long id = q.enqueue("x", EnqueueOptions.builder().uniqueKey("only").expiresAt(Instant.now().plusSeconds(60)).build());
        q.claim(1).get(0).fail("boom");
        assertThat(rows.dead(id)).isNotNull();
        assertThat(q.admin().redrive(id + 1_000)).isFalse();
        assertThat(sluice.queue("other-queue").admin().redrive(id)).as("revive is per queue").isFalse();

        // While a live job holds the unique key, revive is refused and changes nothing.
        long holder = q.enqueue("y", EnqueueOptions.unique("only"));
        assertCode(ErrorCode.UNIQUE_KEY_TAKEN, () -> q.admin().redrive(id));
        assertThat(rows.dead(id)).isNotNull();
        q.claim(1).get(0).ack();
        assertThat(rows.job(holder)).isNull();

        assertThat(q.admin().redrive(id)).isTrue();
        assertThat(rows.dead(id)).isNull();
        assertThat(rows.job(id)).satisfies(r -> {
            assertThat(r.get("state")).isEqualTo("pending");
            assertThat(r.get("attempts")).isEqualTo(0);
            assertThat(r.get("expires_at")).isNull();
            assertThat(r.get("last_error")).isEqualTo("boom");
            assertThat(r.get("max_attempts")).isEqualTo(1);
        });
        JobHandle<String> again = q.claim(1).get(0);
        assertThat(again.id()).isEqualTo(id);
        assertThat(again.attempt()).isEqualTo(1);
        assertThat(again.ack()).isTrue();
    }

    @Test
    void reviveOfSeveralIsAllOrNothing() {
        Queue<String> q = sluice.queue("revive-many", String.class, QueueOptions.builder().maxAttempts(1).build());
        long a = q.enqueue("a");
        long b = q.enqueue("b", EnqueueOptions.unique("kb"));
        long c = q.enqueue("c");
        for (JobHandle<String> h : q.claim(3)) {
            assertThat(h.fail("boom")).isTrue();
        }
        assertThat(List.of(a, b, c)).allSatisfy(id -> assertThat(rows.dead(id)).isNotNull());

        // One id that is not a dead job of this queue: nothing is revived, and the error names it.
        assertThatThrownBy(() -> q.admin().redrive(List.of(a, b, a + 1_000)))
                .isInstanceOfSatisfying(SluiceException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.JOB_NOT_FOUND);
                    assertThat(e.getMessage()).contains(String.valueOf(a + 1_000)).contains("nothing was redriven");
                });
        assertThat(List.of(a, b, c)).allSatisfy(id -> assertThat(rows.dead(id)).isNotNull());

        // A live job holding one's unique key: nothing is revived.
        long holder = q.enqueue("y", EnqueueOptions.unique("kb"));
        assertCode(ErrorCode.UNIQUE_KEY_TAKEN, () -> q.admin().redrive(List.of(a, b)));
        assertThat(rows.dead(a)).isNotNull();
        assertThat(rows.job(a)).isNull();
        q.claim(1).get(0).ack();
        assertThat(rows.job(holder)).isNull();

        // Duplicates count once; every one goes back, pending, attempts reset.
        assertThat(q.admin().redrive(List.of(c, a, b, a))).isEqualTo(3);
        assertThat(List.of(a, b, c)).allSatisfy(id -> {
            assertThat(rows.dead(id)).isNull();
            assertThat(rows.job(id).get("state")).isEqualTo("pending");
            assertThat(rows.job(id).get("attempts")).isEqualTo(0);
        });
        assertThat(q.admin().redrive(List.of())).isZero();
    }

    @Test
    void purgeDeletesDeadJobsByIdOrAllAndRetentionSweepsThem() {
        Queue<String> q = sluice.queue("purge", String.class, QueueOptions.builder().maxAttempts(1)
                .deadLetterRetention(Duration.ofHours(1)).build());
        List<Long> ids = q.enqueueBatch(List.of(NewJob.of("a"), NewJob.of("b"), NewJob.of("c"), NewJob.of("d")));
        for (JobHandle<String> h : q.claim(4)) {
            h.terminal("x");
        }
        assertCode(ErrorCode.JOB_NOT_FOUND, () -> q.admin().purge(List.of(ids.get(0), 999_999L)));
        assertThat(q.admin().stats().dead()).as("a refused purge deletes nothing").isEqualTo(4);
        assertThat(q.admin().purge(List.of(ids.get(0), ids.get(0)))).as("repeats count once").isEqualTo(1);
        assertThat(q.admin().stats().dead()).isEqualTo(3);
        rows.exec("UPDATE " + rows.q + ".job_dead SET purge_after = now() - interval '1 millisecond' WHERE id = ?", ids.get(1));
        assertThat(q.admin().maintain().purged()).isEqualTo(1);
        assertThat(rows.dead(ids.get(1))).isNull();
        assertThat(q.admin().purgeAll()).isEqualTo(2);
        assertThat(q.admin().stats().dead()).isZero();
    }

    @Test
    void listingsPageWithKeysetCursorsAndStatsCountByState() {
        Queue<String> q = sluice.queue("listing", String.class, QueueOptions.builder().maxAttempts(1).build());
        Instant t0 = Instant.parse("2024-01-01T00:00:00Z");
        List<NewJob<String>> jobs = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            jobs.add(NewJob.of("j" + i, EnqueueOptions.builder().priority(i % 3).runAt(t0.plusSeconds(i)).build()));
        }
        q.enqueueBatch(jobs);
        q.enqueue("later", EnqueueOptions.delay(Duration.ofHours(1)));

        List<String> seen = new ArrayList<>();
        String cursor = null;
        int pages = 0;
        do {
            Page<JobInfo> page = q.admin().jobs(JobState.PENDING, cursor, 3);
            page.items().forEach(j -> seen.add(j.priority() + "@" + j.runAt().getEpochSecond() % 60));
            cursor = page.next();
            pages++;
        } while (cursor != null);
        assertThat(pages).isEqualTo(3);
        assertThat(seen).hasSize(8).startsWith("2@2", "2@5", "1@1", "1@4").contains("0@0", "0@3", "0@6");

        List<JobHandle<String>> claimed = q.claim(4);
        List<Long> processing = new ArrayList<>();
        cursor = null;
        do {
            Page<JobInfo> page = q.admin().jobs(JobState.PROCESSING, cursor, 3);
            page.items().forEach(j -> processing.add(j.id()));
            cursor = page.next();
        } while (cursor != null);
        assertThat(processing).containsExactlyInAnyOrderElementsOf(claimed.stream().map(JobHandle::id).toList());

        claimed.get(0).fail("x");
        claimed.get(1).fail("y");
        claimed.get(2).ack();
        assertThat(q.admin().stats()).isEqualTo(new QueueStats(4, 1, 1, 2));
        Page<DeadJob> firstDead = q.admin().deadLetters(null, 1);
        assertThat(firstDead.next()).isNotNull();
        Page<DeadJob> secondDead = q.admin().deadLetters(firstDead.next(), 1);
        assertThat(secondDead.next()).isNull();
        assertThat(List.of(firstDead.items().get(0).id(), secondDead.items().get(0).id()))
                .containsExactly(claimed.get(0).id(), claimed.get(1).id());
        assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> q.admin().jobs(JobState.PROCESSING, firstDead.next(), 3));
        assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> q.admin().deadLetters("not-a-cursor", 3));
        rows.exec("DELETE FROM " + rows.q + ".job WHERE queue = 'listing'");
    }

    @Test
    void concurrentMaintenanceRescuesEveryExpiredClaimExactlyOnce() throws Exception {
        Queue<byte[]> q = sluice.queue("rescue-many").withOptions(FAST);
        List<NewJob<byte[]>> batch = new ArrayList<>();
        for (int i = 0; i < 2_500; i++) {
            batch.add(NewJob.of(new byte[] {(byte) i}));
        }
        q.enqueueBatch(batch);
        int claimed = 0;
        List<JobHandle<byte[]>> got;
        while (!(got = q.claim(1000)).isEmpty()) {
            claimed += got.size();
        }
        assertThat(claimed).isEqualTo(2_500);
        rows.exec("UPDATE " + rows.q + ".job SET claim_expires_at = now() - interval '1 millisecond' WHERE queue = 'rescue-many'");

        int racers = 4;
        CyclicBarrier start = new CyclicBarrier(racers);
        ExecutorService pool = Executors.newFixedThreadPool(racers);
        int rescued = 0;
        try {
            List<Future<QueueMaintenanceReport>> reports = new ArrayList<>();
            for (int i = 0; i < racers; i++) {
                reports.add(pool.submit(() -> {
                    start.await(10, TimeUnit.SECONDS);
                    return q.admin().maintain();
                }));
            }
            for (Future<QueueMaintenanceReport> f : reports) {
                rescued += f.get(60, TimeUnit.SECONDS).rescued();
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(rescued).isEqualTo(2_500);
        assertThat(rows.scalar("SELECT count(*) FROM " + rows.q + ".job WHERE queue = 'rescue-many' AND state = 'pending'"
                + " AND attempts = 1")).isEqualTo(2_500);
    }

    private static double waitSeconds(long id) {
        // run_at and updated_at are set by the same statement, from the same now().
        return rows.seconds("SELECT extract(epoch FROM run_at - updated_at) FROM " + rows.q + ".job WHERE id = ?", id);
    }
}
