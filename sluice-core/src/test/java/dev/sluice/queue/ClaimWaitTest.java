package dev.sluice.queue;

import static dev.sluice.queue.QueueFixture.assertCode;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.EnqueueOptions;
import dev.sluice.ErrorCode;
import dev.sluice.JobHandle;
import dev.sluice.NewJob;
import dev.sluice.Queue;
import dev.sluice.QueueAccess;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code Queue.claim(n, wait)}: woken by enqueue notifications (from another client, and from this one), by a delayed
 * job coming due; empty at the deadline; many waiters at once; bad arguments.
 */
@SluiceTest
class ClaimWaitTest {
    /** The fallback poll while the session is healthy: a return well before it was a wake-up, not the poll. */
    static final long POLL_MS = 5_000;
    static Sluice waiter;
    static Sluice other;

    @BeforeAll
    static void setUp(TestDatabase db) {
        waiter = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).clientId("waiter").maintenance(false).build();
        other = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).clientId("other").maintenance(false).build();
        waiter.system().register();
        // The waiter's LISTEN connection is up before any test waits, so every wait starts with the healthy poll.
        await().atMost(Duration.ofSeconds(30)).until(() -> QueueAccess.sessionHealthy(waiter));
    }

    @AfterAll
    static void tearDown() {
        waiter.close();
        other.close();
    }

    /** A call on a thread of its own, and the thread, so a test can see when it is parked in its wait. */
    record Waiting<T>(Thread thread, CompletableFuture<T> result) {
        static <T> Waiting<T> start(Supplier<T> call) {
            CompletableFuture<T> f = new CompletableFuture<>();
            Thread t = new Thread(() -> {
                try {
                    f.complete(call.get());
                } catch (Throwable e) {
                    f.completeExceptionally(e);
                }
            }, "claim-waiter");
            t.setDaemon(true);
            t.start();
            return new Waiting<>(t, f);
        }

        /** Parked in its wait (a claim in flight reads a socket: RUNNABLE). */
        boolean parked() {
            return thread.getState() == Thread.State.TIMED_WAITING;
        }
    }

    static long millisSince(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nanos);
    }

    @Test
    void aJobEnqueuedByAnotherClientDuringTheWaitIsClaimedAtOnce() throws Exception {
        Queue<String> q = waiter.queue("wait.remote", String.class);
        long start = System.nanoTime();
        Waiting<List<JobHandle<String>>> w = Waiting.start(() -> q.claim(5, Duration.ofSeconds(30)));
        await().atMost(Duration.ofSeconds(10)).until(w::parked);
        assertThat(QueueAccess.claimWaiters(waiter)).isEqualTo(1);

        long enqueued = System.nanoTime();
        long id = other.queue("wait.remote", String.class).enqueue("hello");
        List<JobHandle<String>> got = w.result().get(20, TimeUnit.SECONDS);
        long latency = millisSince(enqueued);
        assertThat(got).singleElement().satisfies(h -> {
            assertThat(h.id()).isEqualTo(id);
            assertThat(h.payload()).isEqualTo("hello");
            assertThat(h.ack()).isTrue();
        });
        assertThat(latency).as("woken by the notification, not the %d ms poll", POLL_MS).isLessThan(POLL_MS / 2);
        assertThat(millisSince(start)).as("well before the 30 s deadline").isLessThan(15_000);
        assertThat(QueueAccess.claimWaiters(waiter)).as("the waiter left its registration").isZero();
    }

    @Test
    void aJobEnqueuedByTheSameClientWakesItToo() throws Exception {
        Queue<String> q = waiter.queue("wait.local", String.class);
        Waiting<List<JobHandle<String>>> w = Waiting.start(() -> q.claim(1, Duration.ofSeconds(30)));
        await().atMost(Duration.ofSeconds(10)).until(w::parked);
        long enqueued = System.nanoTime();
        long id = q.enqueue("local");
        assertThat(w.result().get(20, TimeUnit.SECONDS)).extracting(JobHandle::id).containsExactly(id);
        assertThat(millisSince(enqueued)).isLessThan(POLL_MS / 2);
    }

    @Test
    void nothingComingIsEmptyAtTheDeadline() {
        Queue<String> q = waiter.queue("wait.none", String.class);
        other.queue("wait.elsewhere", String.class).enqueue("not for us");
        long start = System.nanoTime();
        assertThat(q.claim(3, Duration.ofMillis(600))).isEmpty();
        assertThat(millisSince(start)).as("waited until the deadline").isGreaterThanOrEqualTo(600).isLessThan(POLL_MS);
        assertThat(QueueAccess.claimWaiters(waiter)).isZero();

        long zero = System.nanoTime();
        assertThat(q.claim(3, Duration.ZERO)).as("0 waits not at all").isEmpty();
        assertThat(millisSince(zero)).isLessThan(POLL_MS / 2);
    }

    @Test
    void dueJobsReturnAtOnceAndADelayedOneWhenItComesDue() {
        Queue<String> q = waiter.queue("wait.due", String.class);
        q.enqueue("now");
        long start = System.nanoTime();
        assertThat(q.claim(10, Duration.ofSeconds(60))).singleElement().satisfies(h -> assertThat(h.ack()).isTrue());
        assertThat(millisSince(start)).isLessThan(POLL_MS / 2);

        long delayed = other.queue("wait.due", String.class).enqueue("soon", EnqueueOptions.builder().delay(Duration.ofMillis(800)).build());
        long waitFrom = System.nanoTime();
        List<JobHandle<String>> got = q.claim(1, Duration.ofSeconds(30));
        long waited = millisSince(waitFrom);
        assertThat(got).extracting(JobHandle::id).containsExactly(delayed);
        assertThat(waited).as("due after its delay, not at the poll").isBetween(600L, POLL_MS - 1_000);
    }

    @Test
    void manyWaitersEachGetTheirOwnJobPromptly() throws Exception {
        Queue<String> q = waiter.queue("wait.many", String.class);
        int n = 8;
        List<Waiting<List<JobHandle<String>>>> waiters = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            waiters.add(Waiting.start(() -> q.claim(1, Duration.ofSeconds(30))));
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> waiters.stream().allMatch(Waiting::parked));

        // One transaction, one notification: the waiters hand the wake-up on while their claims come back full.
        long enqueued = System.nanoTime();
        List<NewJob<String>> jobs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            jobs.add(NewJob.of("job-" + i));
        }
        Set<Long> expected = new HashSet<>(other.queue("wait.many", String.class).enqueueBatch(jobs));
        Set<Long> claimed = new HashSet<>();
        for (Waiting<List<JobHandle<String>>> w : waiters) {
            List<JobHandle<String>> got = w.result().get(20, TimeUnit.SECONDS);
            assertThat(got).hasSize(1);
            claimed.add(got.get(0).id());
            assertThat(got.get(0).ack()).isTrue();
        }
        assertThat(millisSince(enqueued)).as("every waiter served before the poll").isLessThan(POLL_MS - 1_000);
        assertThat(claimed).as("no job claimed twice").isEqualTo(expected);
        assertThat(QueueAccess.claimWaiters(waiter)).isZero();
    }

    @Test
    void badArgumentsAreCoded() {
        Queue<String> q = waiter.queue("wait.bad", String.class);
        assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> q.claim(0, Duration.ofSeconds(1)));
        assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> q.claim(1001, Duration.ofSeconds(1)));
        assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> q.claim(1, Duration.ofMillis(-1)));
        assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> q.claim(1, Duration.ofSeconds(60).plusNanos(1)));
        assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> q.claim(1, null));
        assertCode(ErrorCode.INVALID_NAME, () -> waiter.queue("Bad Name", String.class).claim(1, Duration.ofSeconds(1)));
        assertThat(QueueAccess.claimWaiters(waiter)).isZero();
    }
}
