package dev.sluice.runs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.Cancellation;
import dev.sluice.JobRun;
import dev.sluice.NewJob;
import dev.sluice.Queue;
import dev.sluice.QueueOptions;
import dev.sluice.RunEvent;
import dev.sluice.RunQuery;
import dev.sluice.RunStatus;
import dev.sluice.Sluice;
import dev.sluice.WorkOptions;
import dev.sluice.Worker;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The run model through workers: batched acks with records and results, awaited plain jobs, cancel while running. */
@SluiceTest
class RunWorkerTest {
    static Sluice sluice;
    static RunFixture rows;

    @BeforeAll
    static void setUp(TestDatabase db) {
        sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(false).build();
        rows = new RunFixture(db);
    }

    @AfterAll
    static void tearDown() {
        sluice.close();
    }

    @Test
    void aWorkersBatchedAcksWriteEveryRecordAndResult() {
        Queue<String> q = sluice.queue("worker-keep", String.class, QueueOptions.builder().keepRuns(Duration.ofDays(1)).build());
        List<NewJob<String>> jobs = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            jobs.add(NewJob.of("j" + i));
        }
        List<Long> ids = q.enqueueBatch(jobs);
        try (Worker w = q.work(job -> {
            if (job.id() % 2 == 0) {
                job.complete("r" + job.id());
            } // odd ones: the worker acks on return
        }, WorkOptions.defaults().withConcurrency(8))) {
            await().atMost(Duration.ofSeconds(60)).until(() -> rows.scalar("SELECT count(*) FROM " + rows.q
                    + ".job_run WHERE queue = 'worker-keep'") == 300);
        }
        for (long id : List.of(ids.get(0), ids.get(1), ids.get(299))) {
            JobRun run = q.run(id).orElseThrow();
            assertThat(run.status()).isEqualTo(RunStatus.SUCCEEDED);
            assertThat(run.result(String.class)).isEqualTo(id % 2 == 0 ? "r" + id : null);
            assertThat(q.events(id)).extracting(RunEvent::type)
                    .containsExactly(RunEvent.Type.ENQUEUED, RunEvent.Type.CLAIMED, RunEvent.Type.SUCCEEDED);
        }
        assertThat(rows.scalar("SELECT count(*) FROM " + rows.q + ".job_event WHERE queue = 'worker-keep'")).isEqualTo(900);
        assertThat(q.runs(RunQuery.builder().status(RunStatus.SUCCEEDED).limit(1000).build()).items()).hasSize(300);
    }

    @Test
    void anAwaitedJobOfAPlainQueueIsRecordedByTheWorkersAck() throws Exception {
        Queue<String> q = sluice.queue("worker-plain", String.class);
        List<Long> ids = q.enqueueBatch(List.of(NewJob.of("a"), NewJob.of("b"), NewJob.of("c")));
        long awaited = ids.get(1);
        rows.exec("UPDATE " + rows.q + ".job SET awaited = true WHERE id = ?", awaited); // a waiter's mark
        try (Worker w = q.work(job -> { }, WorkOptions.defaults())) {
            JobRun run = q.await(awaited, Duration.ofSeconds(30));
            assertThat(run.status()).isEqualTo(RunStatus.SUCCEEDED);
            await().atMost(Duration.ofSeconds(30)).until(() -> rows.scalar("SELECT count(*) FROM " + rows.q
                    + ".job WHERE queue = 'worker-plain'") == 0);
        }
        assertThat(rows.count("job_run", ids.get(0))).as("plain acks keep nothing").isZero();
        assertThat(rows.count("job_run", ids.get(2))).isZero();
        assertThat(rows.count("job_run", awaited)).isEqualTo(1);
    }

    @Test
    void aRunningHandlerLearnsOfItsCancelAtTheNextHeartbeat() throws Exception {
        Queue<String> q = sluice.queue("worker-cancel", String.class, QueueOptions.builder().keepRuns(Duration.ofDays(1))
                .visibilityTimeout(Duration.ofMillis(600)).build()); // heartbeats every 200 ms
        long id = q.enqueue("long");
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch saw = new CountDownLatch(1);
        try (Worker w = q.work(job -> {
            started.countDown();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!job.cancelled() && System.nanoTime() < deadline) {
                java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1)); // polls a flag, no I/O
            }
            if (job.cancelled()) {
                saw.countDown();
            }
        }, WorkOptions.defaults())) {
            assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
            assertThat(q.cancel(id)).isEqualTo(Cancellation.REQUESTED);
            assertThat(saw.await(30, TimeUnit.SECONDS)).as("the handler saw the cancel").isTrue();
            JobRun run = q.await(id, Duration.ofSeconds(30));
            assertThat(run.status()).isEqualTo(RunStatus.CANCELLED);
            assertThat(run.reason()).contains("cancel requested");
        }
    }
}
