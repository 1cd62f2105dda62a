package dev.sluice.runs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.sluice.ErrorCode;
import dev.sluice.JobHandle;
import dev.sluice.JobRun;
import dev.sluice.Queue;
import dev.sluice.QueueOptions;
import dev.sluice.RunsAccess;
import dev.sluice.RunStatus;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Completion waits: before and after the end, without keepRuns, timeouts, many waiters, a waiter's restart. */
@SluiceTest
class AwaitTest {
    static TestDatabase db;
    static Sluice sluice;
    static RunFixture rows;
    static final QueueOptions KEEP = QueueOptions.builder().keepRuns(Duration.ofDays(1)).build();
    static final ExecutorService threads = Executors.newCachedThreadPool();

    @BeforeAll
    static void setUp(TestDatabase database) {
        db = database;
        sluice = client();
        rows = new RunFixture(db);
    }

    static Sluice client() {
        return Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(false).build();
    }

    @AfterAll
    static void tearDown() {
        threads.shutdownNow();
        sluice.close();
    }

    private static JobHandle<String> claimOne(Queue<String> q) {
        List<JobHandle<String>> got = q.claim(1);
        assertThat(got).hasSize(1);
        return got.get(0);
    }

    /** Blocks until {@code n} waiters marked job {@code id} (the mark is the first thing an await writes). */
    private static void awaitMarked(long id) {
        await().atMost(Duration.ofSeconds(30)).until(() -> rows.scalar("SELECT count(*) FROM " + rows.q
                + ".job WHERE id = ? AND awaited", id) == 1);
    }

    @Test
    void anAwaitAfterTheEndReturnsTheRecordAtOnce() {
        Queue<String> q = sluice.queue("await-after", String.class, KEEP);
        long id = q.enqueue("a");
        claimOne(q).complete("done");
        JobRun run = q.await(id, Duration.ZERO);
        assertThat(run.status()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(run.result(String.class)).isEqualTo("done");
    }

    @Test
    void anAwaitBeforeTheEndIsWokenWithTheResult() throws Exception {
        Queue<String> q = sluice.queue("await-before", String.class, KEEP);
        long id = q.enqueue("b");
        Future<JobRun> waiter = threads.submit(() -> q.await(id, Duration.ofMinutes(1)));
        awaitMarked(id);
        assertThat(waiter.isDone()).isFalse();
        claimOne(q).complete("late");
        JobRun run = waiter.get(30, TimeUnit.SECONDS);
        assertThat(run.result(String.class)).isEqualTo("late");
    }

    @Test
    void aJobWithoutKeepRunsCanBeAwaitedWhileLiveAndKeepsItsRecordForTheGrace() throws Exception {
        Queue<String> q = sluice.queue("await-plain", String.class);
        long id = q.enqueue("c");
        Future<JobRun> waiter = threads.submit(() -> q.await(id, Duration.ofMinutes(1)));
        awaitMarked(id);
        Instant before = Instant.now();
        claimOne(q).complete(new byte[] {7, 8, 9}, "application/octet-stream");
        JobRun run = waiter.get(30, TimeUnit.SECONDS);
        assertThat(run.status()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(run.result()).containsExactly(7, 8, 9);
        assertThat(run.keptUntil()).isBetween(before.plus(Duration.ofMinutes(4)), before.plus(Duration.ofMinutes(6)));
        assertThat(q.events(id)).as("no trail without keepRuns").isEmpty();
        // Not awaited and not kept: nothing is left to await.
        long gone = q.enqueue("d");
        claimOne(q).ack();
        assertThatThrownBy(() -> q.await(gone, Duration.ZERO)).isInstanceOfSatisfying(SluiceException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.JOB_NOT_FOUND));
    }

    @Test
    void aWaiterWakesForADeadOrCancelledEndToo() throws Exception {
        Queue<String> q = sluice.queue("await-dead", String.class, KEEP.toBuilder().maxAttempts(1).build());
        long dead = q.enqueue("x");
        Future<JobRun> w1 = threads.submit(() -> q.await(dead, Duration.ofMinutes(1)));
        awaitMarked(dead);
        claimOne(q).fail("nope");
        assertThat(w1.get(30, TimeUnit.SECONDS).status()).isEqualTo(RunStatus.DEAD);
        long cancelled = q.enqueue("y");
        Future<JobRun> w2 = threads.submit(() -> q.await(cancelled, Duration.ofMinutes(1)));
        awaitMarked(cancelled);
        q.cancel(cancelled);
        assertThat(w2.get(30, TimeUnit.SECONDS).status()).isEqualTo(RunStatus.CANCELLED);
    }

    @Test
    void aTimeoutIsCodedAndChangesNothing() {
        Queue<String> q = sluice.queue("await-timeout", String.class, KEEP);
        long id = q.enqueue("t");
        assertThatThrownBy(() -> q.await(id, Duration.ofMillis(50))).isInstanceOfSatisfying(SluiceException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.AWAIT_TIMEOUT);
            assertThat(e.code().retryable()).isTrue();
        });
        assertThat(q.run(id).orElseThrow().status()).isEqualTo(RunStatus.PENDING);
        assertThatThrownBy(() -> q.await(id, Duration.ofSeconds(-1))).isInstanceOfSatisfying(SluiceException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
        assertThatThrownBy(() -> q.await(id, Duration.ofDays(2))).isInstanceOfSatisfying(SluiceException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
        assertThatThrownBy(() -> q.await(123_456_789L, Duration.ZERO)).isInstanceOfSatisfying(SluiceException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.JOB_NOT_FOUND));
    }

    @Test
    void manyWaitersOnOneJobShareOneRegistration() throws Exception {
        Queue<String> q = sluice.queue("await-many", String.class, KEEP);
        long id = q.enqueue("m");
        List<Future<JobRun>> waiters = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            waiters.add(threads.submit(() -> q.await(id, Duration.ofMinutes(1))));
        }
        awaitMarked(id);
        await().atMost(Duration.ofSeconds(30)).until(() -> RunsAccess.awaitedJobs(sluice) == 1);
        // Every waiter marks the job (an UPDATE of its row); a claim skips a row a late mark holds for that moment
        // (FOR UPDATE SKIP LOCKED), so claim until one comes back.
        java.util.concurrent.atomic.AtomicReference<List<JobHandle<String>>> got = new java.util.concurrent.atomic.AtomicReference<>();
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            got.set(q.claim(1));
            return !got.get().isEmpty();
        });
        assertThat(got.get()).hasSize(1);
        got.get().get(0).complete("all");
        for (Future<JobRun> w : waiters) {
            assertThat(w.get(30, TimeUnit.SECONDS).result(String.class)).isEqualTo("all");
        }
        assertThat(RunsAccess.awaitedJobs(sluice)).as("nothing stays behind").isZero();
    }

    @Test
    void aWaiterThatRestartsReawaitsByIdAndFindsTheEnd() {
        Queue<String> plain = sluice.queue("await-restart", String.class);
        long id = plain.enqueue("r");
        try (Sluice first = client()) {
            Queue<String> mine = first.queue("await-restart", String.class);
            assertThatThrownBy(() -> mine.await(id, Duration.ofMillis(20))).isInstanceOf(SluiceException.class);
        } // the waiting process is gone; its presence on the job stays
        claimOne(plain).complete("after the restart");
        try (Sluice second = client()) {
            JobRun run = second.queue("await-restart", String.class).await(id, Duration.ofSeconds(10));
            assertThat(run.result(String.class)).isEqualTo("after the restart");
        }
    }
}
