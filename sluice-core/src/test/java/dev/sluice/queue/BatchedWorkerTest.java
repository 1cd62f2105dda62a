package dev.sluice.queue;

import static dev.sluice.queue.QueueFixture.assertCode;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.EnqueueOptions;
import dev.sluice.ErrorCode;
import dev.sluice.NewJob;
import dev.sluice.Queue;
import dev.sluice.QueueStats;
import dev.sluice.Sluice;
import dev.sluice.WorkOptions;
import dev.sluice.Worker;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.queue.JobStore;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The worker's batched paths: acks batched by the completer (still guarded per claim), prefetched batch
 * claims (never two runs of one job at once), the drain on close (every ack written, every unstarted
 * prefetched job given back uncounted), and the bulk enqueue.
 */
@SluiceTest
class BatchedWorkerTest {
    static Sluice sluice;
    static Sluice other;
    static JobStore store;
    static QueueFixture rows;
    static final WorkOptions QUICK = WorkOptions.defaults().withPollInterval(Duration.ofMillis(50))
            .withIdleCheck(Duration.ofMillis(200)).withMaintenanceInterval(Duration.ofMillis(100));

    @BeforeAll
    static void setUp(TestDatabase db) {
        sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).clientId("process-a").build();
        other = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).clientId("process-b").build();
        sluice.system().register();
        store = new JobStore(new Db(db.dataSource()), db.schema());
        rows = new QueueFixture(db);
    }

    @AfterAll
    static void tearDown() {
        sluice.close();
        other.close();
    }

    private static List<Long> enqueue(Queue<String> q, int n) {
        List<NewJob<String>> jobs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            jobs.add(NewJob.of("job-" + i));
        }
        return q.enqueueBatch(jobs);
    }

    @Test
    void aBatchedAckDeletesOnlyTheRowsStillHeldUnderTheirClaim() {
        Queue<String> q = sluice.queue("batched-ack", String.class);
        enqueue(q, 4);
        List<JobStore.Claimed> claimed = store.claim(q.name(), 4, "test-worker");
        assertThat(claimed).hasSize(4);
        JobStore.Claimed held = claimed.get(0);
        JobStore.Claimed expired = claimed.get(1);
        JobStore.Claimed takenOver = claimed.get(2);
        JobStore.Claimed released = claimed.get(3);
        rows.expireClaim(expired.id());
        // Rescued and claimed again by someone else: same row, another token.
        rows.exec("UPDATE " + rows.q + ".job SET claim_token = gen_random_uuid() WHERE id = ?", takenOver.id());
        assertThat(store.releaseAll(new long[] {released.id()}, new UUID[] {released.token()})).isEqualTo(1);
        Map<String, Object> takenOverBefore = rows.job(takenOver.id());

        long[] ids = claimed.stream().mapToLong(JobStore.Claimed::id).toArray();
        UUID[] tokens = claimed.stream().map(JobStore.Claimed::token).toArray(UUID[]::new);
        Set<Long> deleted = store.ackAll(ids, tokens);

        assertThat(deleted).containsExactly(held.id());
        assertThat(rows.job(held.id())).isNull();
        assertThat(rows.job(expired.id())).as("expired claim: unchanged, left for the rescuer").satisfies(r -> {
            assertThat(r.get("state")).isEqualTo("processing");
            assertThat(r.get("claim_token")).isEqualTo(expired.token());
        });
        assertThat(rows.job(takenOver.id())).as("another claim's row: unchanged").isEqualTo(takenOverBefore);
        assertThat(rows.job(released.id())).as("released row: still pending").satisfies(r -> {
            assertThat(r.get("state")).isEqualTo("pending");
            assertThat(r.get("attempts")).isEqualTo(0);
        });
        // Acking the same claims again changes nothing more.
        assertThat(store.ackAll(ids, tokens)).isEmpty();
    }

    @Test
    void aBatchOfSeveralClaimsPairsEveryIdWithItsOwnToken() {
        Queue<String> q = sluice.queue("batched-tokens", String.class);
        enqueue(q, 6);
        List<JobStore.Claimed> a = store.claim(q.name(), 3, "worker-a");
        List<JobStore.Claimed> b = store.claim(q.name(), 3, "worker-b");
        assertThat(a.get(0).token()).isNotEqualTo(b.get(0).token());
        // Interleaved, and one id presented with the other claim's token: that one must stay.
        long[] ids = {a.get(0).id(), b.get(0).id(), a.get(1).id(), b.get(1).id(), a.get(2).id()};
        UUID[] tokens = {a.get(0).token(), b.get(0).token(), a.get(1).token(), b.get(1).token(), b.get(0).token()};
        assertThat(store.ackAll(ids, tokens)).containsExactlyInAnyOrder(a.get(0).id(), b.get(0).id(), a.get(1).id(), b.get(1).id());
        assertThat(rows.job(a.get(2).id())).as("presented with another claim's token: kept").isNotNull();
        // A batch where every ack holds: all reported deleted.
        long[] rest = {a.get(2).id(), b.get(2).id()};
        assertThat(store.ackAll(rest, new UUID[] {a.get(2).token(), b.get(2).token()})).containsExactlyInAnyOrder(rest[0], rest[1]);
        assertThat(q.admin().stats().processing()).isZero();
    }

    @Test
    void theClaimCommitsAsynchronouslyWithoutChangingTheConnectionsSetting(TestDatabase db) throws Exception {
        // One physical connection, handed out again and again (close() keeps it open), as a pool would.
        try (Connection physical = db.connect()) {
            Connection shared = (Connection) java.lang.reflect.Proxy.newProxyInstance(Connection.class.getClassLoader(),
                    new Class<?>[] {Connection.class}, (proxy, m, args) -> m.getName().equals("close") ? null : m.invoke(physical, args));
            javax.sql.DataSource one = new dev.sluice.testing.ForwardingDataSource(db.dataSource()) {
                @Override
                public Connection getConnection() {
                    return shared;
                }
            };
            JobStore s = new JobStore(new Db(one), db.schema());
            Queue<String> q = sluice.queue("async-claim", String.class);
            enqueue(q, 2);
            assertThat(s.claim(q.name(), 2, "w")).hasSize(2);
            try (java.sql.Statement st = physical.createStatement();
                 java.sql.ResultSet rs = st.executeQuery("SELECT current_setting('synchronous_commit')")) {
                rs.next();
                assertThat(rs.getString(1)).isEqualTo("on");
            }
            assertThat(q.admin().stats().processing()).isEqualTo(2);
        }
    }

    @Test
    void aHandlerAckThroughTheCompleterIsRefusedOnceTheClaimIsLost() throws Exception {
        Queue<String> q = sluice.queue("lost-in-handler", String.class);
        long kept = q.enqueue("kept");
        long lost = q.enqueue("lost");
        Map<Long, Boolean> acked = new ConcurrentHashMap<>();
        CountDownLatch done = new CountDownLatch(2);
        try (Worker w = q.work(job -> {
            if (job.id() == lost) {
                rows.expireClaim(job.id());
            }
            acked.put(job.id(), job.ack());
            done.countDown();
        }, QUICK.withPrefetch(10).withMaintenanceInterval(Duration.ZERO))) {
            assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(acked).containsEntry(kept, true).containsEntry(lost, false);
        assertThat(rows.job(kept)).isNull();
        assertThat(rows.job(lost)).as("refused ack changed nothing").satisfies(r -> {
            assertThat(r.get("state")).isEqualTo("processing");
            assertThat(r.get("attempts")).isEqualTo(1);
        });
    }

    @Test
    void prefetchingWorkersHandleEveryJobOnceAndNeverTwoAtOnce() {
        Queue<String> q = sluice.queue("prefetch-shared", String.class);
        enqueue(q, 600);
        Map<Long, AtomicInteger> handled = new ConcurrentHashMap<>();
        Set<Long> running = ConcurrentHashMap.newKeySet();
        List<String> overlaps = new CopyOnWriteArrayList<>();
        java.util.function.Function<String, dev.sluice.JobHandler<String>> handler = name -> job -> {
            if (!running.add(job.id())) {
                overlaps.add(name + " got " + job.id() + " while it was running");
            }
            if (job.id() % 7 == 0) {
                Thread.sleep(1);
            }
            handled.computeIfAbsent(job.id(), k -> new AtomicInteger()).incrementAndGet();
            running.remove(job.id());
        };
        try (Worker a = q.work(handler.apply("a"), QUICK.withConcurrency(3).withPrefetch(64));
             Worker b = other.queue("prefetch-shared", String.class).work(handler.apply("b"),
                     QUICK.withConcurrency(2).withPrefetch(100))) {
            await().atMost(Duration.ofSeconds(60)).until(() -> q.admin().stats().equals(new QueueStats(0, 0, 0, 0)));
        }
        assertThat(overlaps).isEmpty();
        assertThat(handled).hasSize(600).allSatisfy((id, n) -> assertThat(n.get()).as("job " + id).isEqualTo(1));
    }

    @Test
    void prefetchedJobsOnAnUnboundedExecutorStillRunAtMostConcurrencyAtOnce() {
        Queue<String> q = sluice.queue("prefetch-unbounded", String.class);
        enqueue(q, 120);
        AtomicInteger running = new AtomicInteger();
        AtomicInteger maxRunning = new AtomicInteger();
        AtomicInteger handled = new AtomicInteger();
        java.util.concurrent.ExecutorService unbounded = java.util.concurrent.Executors.newCachedThreadPool();
        try (Worker w = q.work(job -> {
            maxRunning.accumulateAndGet(running.incrementAndGet(), Math::max);
            Thread.sleep(2);
            running.decrementAndGet();
            handled.incrementAndGet();
        }, QUICK.withConcurrency(3).withPrefetch(50).withExecutor(unbounded))) {
            await().atMost(Duration.ofSeconds(30)).until(() -> q.admin().stats().equals(new QueueStats(0, 0, 0, 0)));
        } finally {
            unbounded.shutdownNow();
        }
        assertThat(handled.get()).isEqualTo(120);
        assertThat(maxRunning.get()).isBetween(1, 3);
    }

    @Test
    void aJobClaimedAgainWhileItsEarlierClaimStillRunsWaitsForThatRun() throws Exception {
        Queue<String> q = sluice.queue("reclaimed", String.class);
        long id = q.enqueue("x");
        AtomicInteger concurrent = new AtomicInteger();
        AtomicInteger maxConcurrent = new AtomicInteger();
        List<Integer> attempts = new CopyOnWriteArrayList<>();
        List<Integer> finished = new CopyOnWriteArrayList<>();
        try (Worker w = q.work(job -> {
            maxConcurrent.accumulateAndGet(concurrent.incrementAndGet(), Math::max);
            attempts.add(job.attempt());
            if (job.attempt() == 1) {
                // As if the claim expired and the rescuer put the job back while this handler still runs:
                // the same worker claims it again at once (it has free slots).
                rows.exec("UPDATE " + rows.q + ".job SET state = 'pending', claim_token = NULL, claim_expires_at = NULL,"
                        + " run_at = now() WHERE id = ?", id);
                await().atMost(Duration.ofSeconds(10)).until(() -> "processing".equals(rows.job(id).get("state")));
                Thread.sleep(300); // the second claim is held meanwhile, not run
            }
            finished.add(job.attempt());
            concurrent.decrementAndGet();
        }, QUICK.withConcurrency(4).withPrefetch(8).withMaintenanceInterval(Duration.ZERO))) {
            await().atMost(Duration.ofSeconds(20)).until(() -> rows.job(id) == null);
        }
        assertThat(maxConcurrent.get()).isEqualTo(1);
        assertThat(attempts).containsExactly(1, 2);
        assertThat(finished).containsExactly(1, 2);
    }

    @Test
    void closeWritesEveryAckAndGivesBackPrefetchedJobsUncounted() throws Exception {
        Queue<String> q = sluice.queue("close-batched", String.class);
        List<Long> ids = enqueue(q, 300);
        Set<Long> handled = ConcurrentHashMap.newKeySet();
        CountDownLatch some = new CountDownLatch(20);
        Worker w = q.work(job -> {
            Thread.sleep(5);
            handled.add(job.id());
            some.countDown();
        }, QUICK.withConcurrency(2).withPrefetch(100).withMaintenanceInterval(Duration.ZERO));
        assertThat(some.await(20, TimeUnit.SECONDS)).isTrue();
        w.close();
        int afterClose = handled.size();
        assertThat(afterClose).isLessThan(300);
        for (long id : ids) {
            Map<String, Object> r = rows.job(id);
            if (handled.contains(id)) {
                assertThat(r).as("handled job %d is acked by the time close returns", id).isNull();
            } else {
                assertThat(r).as("unhandled job %d", id).isNotNull();
                assertThat(r.get("state")).isEqualTo("pending");
                assertThat(r.get("attempts")).as("given back uncounted").isEqualTo(0);
            }
        }
        assertThat(rows.scalar("SELECT count(*) FROM " + rows.q + ".job WHERE queue = ?", q.name()))
                .isEqualTo(300 - afterClose);
        assertThat(handled).hasSize(afterClose);
    }

    @Test
    void bulkEnqueueKeepsInputOrderAndJoinsTheCallersTransaction(TestDatabase db) throws Exception {
        Queue<String> q = sluice.queue("bulk", String.class);
        List<NewJob<String>> jobs = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            jobs.add(NewJob.of("b" + i, i % 5 == 0 ? EnqueueOptions.priority(i) : EnqueueOptions.NONE));
        }
        List<Long> ids = q.enqueueBatch(jobs);
        assertThat(ids).hasSize(50).isSorted().doesNotHaveDuplicates();
        for (int i = 0; i < 50; i++) {
            assertThat(rows.job(ids.get(i))).satisfies(r -> assertThat(r.get("state")).isEqualTo("pending"));
        }
        assertThat(rows.job(ids.get(10)).get("priority")).isEqualTo(10);
        assertThat((String) rows.job(ids.get(7)).get("payload")).isEqualTo("b7");

        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            long id = q.enqueueInTransaction(c, "rolled-back", EnqueueOptions.NONE);
            c.rollback();
            assertThat(rows.job(id)).isNull();
        }
    }

    @Test
    void prefetchIsCheckedAndTheOldConstructorMeansNone() {
        assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> WorkOptions.defaults().withPrefetch(-1));
        assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> WorkOptions.defaults().withPrefetch(1001));
        WorkOptions d = WorkOptions.defaults();
        assertThat(new WorkOptions(d.concurrency(), null, d.pollInterval(), d.idleCheck(), d.shutdownTimeout(),
                d.maintenanceInterval(), true).prefetch()).isZero();
        assertThat(d.withPrefetch(256).withConcurrency(3).prefetch()).isEqualTo(256);
    }
}
