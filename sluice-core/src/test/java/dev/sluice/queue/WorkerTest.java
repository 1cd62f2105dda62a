package dev.sluice.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.DeadReason;
import dev.sluice.EnqueueOptions;
import dev.sluice.JobHandle;
import dev.sluice.NewJob;
import dev.sluice.Queue;
import dev.sluice.QueueOptions;
import dev.sluice.QueueStats;
import dev.sluice.Sluice;
import dev.sluice.WorkOptions;
import dev.sluice.Worker;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The worker: exclusivity across workers, heartbeats, rescue, retries, drain on close, wake-ups. */
@SluiceTest
class WorkerTest {
    static Sluice sluice;
    static Sluice other;
    static QueueFixture rows;
    /** Quick polls, so tests that do not test wake-ups do not wait on them. */
    static final WorkOptions QUICK = WorkOptions.defaults().withPollInterval(Duration.ofMillis(50))
            .withIdleCheck(Duration.ofMillis(200)).withMaintenanceInterval(Duration.ofMillis(100));

    record Task(int n) {
    }

    @BeforeAll
    static void setUp(TestDatabase db) {
        sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).clientId("process-a").build();
        other = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).clientId("process-b").build();
        sluice.system().register();
        rows = new QueueFixture(db);
    }

    @AfterAll
    static void tearDown() {
        sluice.close();
        other.close();
    }

    @Test
    void twoWorkersNeverHoldTheSameJobAndEveryJobIsHandledOnce() {
        Queue<Task> q = sluice.queue("shared", Task.class);
        List<NewJob<Task>> jobs = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            jobs.add(NewJob.of(new Task(i)));
        }
        q.enqueueBatch(jobs);
        Map<Long, AtomicInteger> handled = new ConcurrentHashMap<>();
        Set<Long> held = ConcurrentHashMap.newKeySet();
        List<String> overlaps = new CopyOnWriteArrayList<>();
        Map<String, AtomicInteger> byWorker = new ConcurrentHashMap<>();
        java.util.function.Function<String, dev.sluice.JobHandler<Task>> handler = name -> job -> {
            if (!held.add(job.id())) {
                overlaps.add(name + " got " + job.id() + " while another worker held it");
            }
            Thread.sleep(1);
            handled.computeIfAbsent(job.id(), k -> new AtomicInteger()).incrementAndGet();
            byWorker.computeIfAbsent(name, k -> new AtomicInteger()).incrementAndGet();
            held.remove(job.id());
        };
        try (Worker a = q.work(handler.apply("a"), QUICK.withConcurrency(4));
             Worker b = other.queue("shared", Task.class).work(handler.apply("b"), QUICK.withConcurrency(4))) {
            await().atMost(Duration.ofSeconds(60)).until(() -> q.admin().stats().equals(new QueueStats(0, 0, 0, 0)));
            assertThat(a.workerId()).startsWith("process-a/shared/");
            assertThat(b.workerId()).startsWith("process-b/shared/");
        }
        assertThat(overlaps).isEmpty();
        assertThat(handled).hasSize(200).allSatisfy((id, n) -> assertThat(n.get()).as("job " + id).isEqualTo(1));
        assertThat(byWorker.values().stream().mapToInt(AtomicInteger::get).sum()).isEqualTo(200);
    }

    @Test
    void heartbeatsKeepASlowJobFromBeingClaimedAgain() throws Exception {
        QueueOptions shortClaims = QueueOptions.builder().visibilityTimeout(Duration.ofMillis(600))
                .backoffBase(Duration.ofMillis(1)).build();
        Queue<String> q = sluice.queue("slow", String.class, shortClaims);
        long id = q.enqueue("slow");
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch started = new CountDownLatch(1);
        AtomicInteger competitorRuns = new AtomicInteger();
        try (Worker slow = q.work(job -> {
            runs.incrementAndGet();
            started.countDown();
            Thread.sleep(2_500); // about four visibility timeouts
        }, QUICK.withConcurrency(1))) {
            assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
            // Meanwhile a competitor (claiming and running maintenance every 100 ms) never gets it, and a
            // direct claim finds nothing.
            try (Worker competitor = other.queue("slow", String.class).work(job -> competitorRuns.incrementAndGet(), QUICK)) {
                for (int i = 0; i < 10; i++) {
                    assertThat(q.claim(1)).isEmpty();
                    Thread.sleep(200);
                }
                await().atMost(Duration.ofSeconds(10)).until(() -> rows.job(id) == null);
            }
        }
        assertThat(runs.get()).isEqualTo(1);
        assertThat(competitorRuns.get()).isZero();
        assertThat(rows.dead(id)).isNull();
    }

    @Test
    void aWorkerThatStopsHeartbeatingLosesItsJobToARescueAndAnotherWorker() {
        QueueOptions shortClaims = QueueOptions.builder().visibilityTimeout(Duration.ofMillis(400))
                .backoffBase(Duration.ofMillis(1)).maxBackoff(Duration.ofMillis(1)).build();
        Queue<String> q = sluice.queue("crash", String.class, shortClaims);
        long id = q.enqueue("x");
        // A worker that claimed and then stopped (crashed, paused): it never heartbeats.
        JobHandle<String> crashed = q.claim(1).get(0);
        List<Integer> attempts = new CopyOnWriteArrayList<>();
        try (Worker rescuer = other.queue("crash", String.class).work(job -> attempts.add(job.attempt()), QUICK)) {
            await().atMost(Duration.ofSeconds(10)).until(() -> rows.job(id) == null);
        }
        assertThat(attempts).containsExactly(2);
        assertThat(crashed.ack()).isFalse();
        assertThat(rows.dead(id)).isNull();
    }

    @Test
    void aFailingHandlerIsRetriedWithBackoffThenDeadWithItsLastError() {
        Queue<String> q = sluice.queue("failing", String.class, QueueOptions.builder().maxAttempts(3)
                .backoffBase(Duration.ofMillis(20)).build());
        long id = q.enqueue("x");
        List<Integer> attempts = new CopyOnWriteArrayList<>();
        try (Worker w = q.work(job -> {
            attempts.add(job.attempt());
            throw new IllegalStateException("attempt " + job.attempt() + " failed");
        }, QUICK)) {
            await().atMost(Duration.ofSeconds(10)).until(() -> rows.dead(id) != null);
        }
        assertThat(attempts).containsExactly(1, 2, 3);
        assertThat(rows.dead(id)).satisfies(d -> {
            assertThat(d.get("reason")).isEqualTo("failed");
            assertThat((String) d.get("last_error")).startsWith("java.lang.IllegalStateException: attempt 3 failed");
        });
    }

    @Test
    void aHandlerMayResolveTheHandleItselfAndAnUndecodablePayloadIsDiscarded() {
        Queue<Task> q = sluice.queue("resolved", Task.class);
        long retried = q.enqueue(new Task(1));
        long bad = sluice.queue("resolved").enqueue("not json".getBytes(StandardCharsets.UTF_8));
        List<Integer> seen = new CopyOnWriteArrayList<>();
        try (Worker w = q.work(job -> {
            seen.add(job.payload().n());
            if (job.attempt() == 1) {
                job.retry(Duration.ofMillis(50)); // the worker must not ack it afterwards
            }
        }, QUICK)) {
            await().atMost(Duration.ofSeconds(10)).until(() -> rows.job(retried) == null && rows.dead(bad) != null);
        }
        assertThat(seen).containsExactly(1, 1);
        assertThat(q.admin().deadLetters(null, 10).items()).singleElement().satisfies(d -> {
            assertThat(d.id()).isEqualTo(bad);
            assertThat(d.reason()).isEqualTo(DeadReason.DISCARDED);
            assertThat(d.lastError()).startsWith("undecodable payload");
        });
    }

    @Test
    void closeDrainsFinishingHandlersAndReleasesUnfinishedClaimsAtOnce() throws Exception {
        // A minute-long visibility timeout: only the release can make the job available quickly.
        Queue<String> q = sluice.queue("drain", String.class, QueueOptions.builder().visibilityTimeout(Duration.ofMinutes(1))
                .build());
        long quick = q.enqueue("quick");
        long stuck = q.enqueue("stuck");
        CountDownLatch bothStarted = new CountDownLatch(2);
        CountDownLatch never = new CountDownLatch(1);
        Worker w = q.work(job -> {
            bothStarted.countDown();
            if (job.payload().equals("quick")) {
                Thread.sleep(300); // finishes within the shutdown timeout
            } else {
                never.await(); // still running when the shutdown timeout ends
            }
        }, QUICK.withConcurrency(2).withShutdownTimeout(Duration.ofSeconds(1)));
        assertThat(bothStarted.await(10, TimeUnit.SECONDS)).isTrue();
        w.close();
        assertThat(w.running()).isFalse();
        assertThat(rows.job(quick)).as("finished during the drain and acked").isNull();
        assertThat(rows.job(stuck)).as("released: pending, attempt not counted").satisfies(r -> {
            assertThat(r.get("state")).isEqualTo("pending");
            assertThat(r.get("attempts")).isEqualTo(0);
            assertThat(r.get("claim_token")).isNull();
        });
        List<Integer> attempts = new CopyOnWriteArrayList<>();
        try (Worker next = other.queue("drain", String.class).work(job -> attempts.add(job.attempt()), QUICK)) {
            await().atMost(Duration.ofSeconds(5)).until(() -> rows.job(stuck) == null);
        }
        assertThat(attempts).containsExactly(1);
    }

    @Test
    void anIdleWorkerWakesOnEnqueueAndAtTheDueTimeOfADelayedJob() throws Exception {
        Queue<String> q = sluice.queue("wakeup", String.class);
        WorkOptions sleepy = WorkOptions.defaults().withPollInterval(Duration.ofMinutes(1)).withIdleCheck(Duration.ofMinutes(1));
        List<String> handled = new CopyOnWriteArrayList<>();
        try (Worker w = q.work(job -> handled.add(job.payload()), sleepy)) {
            q.enqueue("first");
            await().atMost(Duration.ofSeconds(10)).until(() -> handled.contains("first"));
            Thread.sleep(300); // let the worker go idle: it now sleeps up to a minute unless woken

            long enqueued = System.nanoTime();
            q.enqueue("second");
            await().atMost(Duration.ofSeconds(5)).until(() -> handled.contains("second"));
            assertThat(Duration.ofNanos(System.nanoTime() - enqueued)).isLessThan(Duration.ofSeconds(5));

            Thread.sleep(300);
            long delayedAt = System.nanoTime();
            q.enqueue("delayed", EnqueueOptions.delay(Duration.ofMillis(800)));
            await().atMost(Duration.ofSeconds(6)).until(() -> handled.contains("delayed"));
            assertThat(Duration.ofNanos(System.nanoTime() - delayedAt)).isGreaterThanOrEqualTo(Duration.ofMillis(800))
                    .isLessThan(Duration.ofSeconds(6));
        }
        assertThat(handled).containsExactly("first", "second", "delayed");
    }

    /**
     * A busy worker starts each claim's index scan near where its previous claim began (claim bounds); a job
     * that becomes due below that point — here enqueued with a run_at an hour ago — must still run within
     * the bounds' unbounded rescan (at least every 500 ms), not only once the backlog has run dry.
     */
    @Test
    void aJobDueBelowTheClaimBoundsRunsWhileTheQueueStaysBusy() {
        Queue<Task> q = sluice.queue("busy-bounds", Task.class);
        int backlog = 20_000;
        for (int from = 0; from < backlog; from += 1_000) {
            List<NewJob<Task>> jobs = new ArrayList<>();
            for (int i = from; i < from + 1_000; i++) {
                jobs.add(NewJob.of(new Task(i)));
            }
            q.enqueueBatch(jobs);
        }
        AtomicInteger handled = new AtomicInteger();
        java.util.concurrent.atomic.AtomicLong lateStarted = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.atomic.AtomicInteger handledBeforeLate = new java.util.concurrent.atomic.AtomicInteger(-1);
        try (Worker w = q.work(job -> {
            if (job.payload().n() < 0) {
                handledBeforeLate.set(handled.get());
                lateStarted.set(System.nanoTime());
                return;
            }
            Thread.sleep(1);
            handled.incrementAndGet();
        }, QUICK.withConcurrency(2).withPrefetch(20))) {
            await().atMost(30, TimeUnit.SECONDS).until(() -> handled.get() >= 500);
            long enqueued = System.nanoTime();
            q.enqueue(new Task(-1), EnqueueOptions.builder().runAt(java.time.Instant.now().minusSeconds(3_600)).build());
            await().atMost(30, TimeUnit.SECONDS).until(() -> lateStarted.get() != 0);
            assertThat(Duration.ofNanos(lateStarted.get() - enqueued)).as("from enqueue to start of the job below the bounds")
                    .isLessThan(Duration.ofSeconds(3));
            assertThat(handledBeforeLate.get()).as("backlog jobs handled before it (of " + backlog + ")")
                    .isLessThan(backlog - 5_000);
        }
    }
}
