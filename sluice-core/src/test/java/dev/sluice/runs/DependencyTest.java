package dev.sluice.runs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.EnqueueOptions;
import dev.sluice.ErrorCode;
import dev.sluice.JobHandle;
import dev.sluice.JobRun;
import dev.sluice.JobState;
import dev.sluice.NewJob;
import dev.sluice.ParentFailure;
import dev.sluice.Queue;
import dev.sluice.QueueOptions;
import dev.sluice.RunStatus;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.WorkOptions;
import dev.sluice.Worker;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Dependencies: chains, fan-in, failed parents (cancel and run policies), parents that already ended, bad input. */
@SluiceTest
class DependencyTest {
    static Sluice sluice;
    static RunFixture rows;
    static final QueueOptions KEEP = QueueOptions.builder().keepRuns(Duration.ofDays(1)).maxAttempts(1).build();

    @BeforeAll
    static void setUp(TestDatabase db) {
        sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(false).build();
        rows = new RunFixture(db);
    }

    @AfterAll
    static void tearDown() {
        sluice.close();
    }

    private static Queue<String> queue(String name) {
        return sluice.queue(name, String.class, KEEP);
    }

    private static RunStatus status(Queue<String> q, long id) {
        return q.run(id).orElseThrow().status();
    }

    private static JobHandle<String> claimOne(Queue<String> q) {
        List<JobHandle<String>> got = q.claim(1);
        assertThat(got).hasSize(1);
        return got.get(0);
    }

    @Test
    void aChildWaitsUntilItsParentSucceeded() {
        Queue<String> q = queue("deps-simple");
        long parent = q.enqueue("p");
        long child = q.enqueue("c", EnqueueOptions.after(List.of(parent)));
        assertThat(status(q, child)).isEqualTo(RunStatus.WAITING);
        assertThat(q.admin().jobs(JobState.WAITING, null, 10).items()).extracting(j -> j.id()).containsExactly(child);
        assertThat(q.admin().stats().waiting()).isEqualTo(1);
        assertThat(sluice.queues()).filteredOn(i -> i.name().equals("deps-simple")).singleElement()
                .satisfies(i -> assertThat(i.waiting()).isEqualTo(1));
        JobHandle<String> p = claimOne(q);
        assertThat(p.id()).isEqualTo(parent);
        assertThat(q.claim(1)).as("the child is not claimable while its parent runs").isEmpty();
        p.ack();
        assertThat(status(q, child)).isEqualTo(RunStatus.PENDING);
        assertThat(claimOne(q).id()).isEqualTo(child);
        assertThat(rows.count("job_dependency", child)).as("edges go with the parent's end").isZero();
    }

    @Test
    void aChainOfAThousandRunsInOrder(TestDatabase db) throws Exception {
        int n = 1000;
        com.zaxxer.hikari.HikariConfig pool = new com.zaxxer.hikari.HikariConfig();
        pool.setDataSource(db.dataSource());
        pool.setMaximumPoolSize(4);
        // A client of its own over a pool (2,000 claims and acks); closed with the pool, so no pooled connection
        // outlives the client that used it.
        try (com.zaxxer.hikari.HikariDataSource ds = new com.zaxxer.hikari.HikariDataSource(pool);
             Sluice pooled = Sluice.builder().dataSource(ds).schema(db.schema()).maintenance(false).build()) {
            Queue<String> q = pooled.queue("deps-chain", String.class, KEEP);
            List<Long> ids = new ArrayList<>();
            // Built in one transaction of the caller's: each child names the one before, which its transaction sees.
            try (java.sql.Connection c = ds.getConnection()) {
                c.setAutoCommit(false);
                ids.add(q.enqueueInTransaction(c, "0", EnqueueOptions.NONE));
                for (int i = 1; i < n; i++) {
                    ids.add(q.enqueueInTransaction(c, Integer.toString(i), EnqueueOptions.after(List.of(ids.get(i - 1)))));
                }
                c.commit();
            }
            assertThat(rows.scalar("SELECT count(*) FROM " + rows.q + ".job WHERE queue = 'deps-chain' AND state = 'waiting'"))
                    .isEqualTo(n - 1);
            List<Long> order = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                List<JobHandle<String>> got = q.claim(2);
                assertThat(got).as("exactly one link is claimable at a time").hasSize(1);
                order.add(got.get(0).id());
                assertThat(got.get(0).ack()).isTrue();
            }
            assertThat(order).containsExactlyElementsOf(ids);
            assertThat(status(q, ids.get(n - 1))).isEqualTo(RunStatus.SUCCEEDED);
        }
    }

    @Test
    void aFanInOfAThousandParents() {
        Queue<String> q = queue("deps-fanin");
        List<NewJob<String>> batch = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            batch.add(NewJob.of("p" + i));
        }
        List<Long> parents = q.enqueueBatch(batch);
        long child = q.enqueue("child", EnqueueOptions.after(parents));
        assertThat(rows.count("job_dependency", child)).isEqualTo(1000);
        ConcurrentHashMap<Long, Long> finished = new ConcurrentHashMap<>();
        AtomicLong clock = new AtomicLong();
        try (Worker w = q.work(job -> finished.put(job.id(), clock.incrementAndGet()),
                WorkOptions.defaults().withConcurrency(8))) {
            assertThat(q.await(child, Duration.ofMinutes(2)).status()).isEqualTo(RunStatus.SUCCEEDED);
        }
        long childAt = finished.get(child);
        assertThat(parents).allSatisfy(p -> assertThat(finished.get(p)).isLessThan(childAt));
    }

    @Test
    void aDeadParentCancelsItsChildrenAndTheirChildrenUnlessTheyRunAnyway() {
        Queue<String> q = queue("deps-dead");
        long parent = q.enqueue("p");
        long child = q.enqueue("c", EnqueueOptions.after(List.of(parent)));
        long grandchild = q.enqueue("g", EnqueueOptions.after(List.of(child)));
        long runner = q.enqueue("r", EnqueueOptions.builder().after(parent).onParentFailure(ParentFailure.RUN).build());
        claimOne(q).fail("parent broke"); // maxAttempts 1: dead
        assertThat(status(q, parent)).isEqualTo(RunStatus.DEAD);
        JobRun c = q.run(child).orElseThrow();
        assertThat(c.status()).isEqualTo(RunStatus.CANCELLED);
        assertThat(c.reason()).contains("parent job " + parent);
        JobRun g = q.run(grandchild).orElseThrow();
        assertThat(g.status()).isEqualTo(RunStatus.CANCELLED);
        assertThat(g.reason()).contains("parent job " + child);
        assertThat(status(q, runner)).isEqualTo(RunStatus.PENDING);
        assertThat(claimOne(q).id()).isEqualTo(runner);
    }

    @Test
    void aCancelledParentCancelsItsChild() {
        Queue<String> q = queue("deps-cancel");
        long parent = q.enqueue("p");
        long child = q.enqueue("c", EnqueueOptions.after(List.of(parent)));
        q.cancel(parent);
        assertThat(status(q, child)).isEqualTo(RunStatus.CANCELLED);
        // A parent cancelled while it ran: its ack ends it cancelled, and the child follows.
        long running = q.enqueue("r");
        long second = q.enqueue("s", EnqueueOptions.after(List.of(running)));
        JobHandle<String> h = claimOne(q);
        q.cancel(running);
        h.ack();
        assertThat(status(q, running)).isEqualTo(RunStatus.CANCELLED);
        assertThat(status(q, second)).isEqualTo(RunStatus.CANCELLED);
    }

    @Test
    void parentsThatAlreadyEndedAreReadFromTheirRecords() {
        Queue<String> q = queue("deps-ended");
        long ok = q.enqueue("ok");
        claimOne(q).ack();
        long child = q.enqueue("c", EnqueueOptions.after(List.of(ok)));
        assertThat(status(q, child)).as("its parent succeeded before it was enqueued").isEqualTo(RunStatus.PENDING);
        claimOne(q).ack();

        long bad = q.enqueue("bad");
        claimOne(q).fail("x");
        long doomed = q.enqueue("d", EnqueueOptions.after(List.of(bad, ok)));
        assertThat(q.run(doomed).orElseThrow()).satisfies(r -> {
            assertThat(r.status()).isEqualTo(RunStatus.CANCELLED);
            assertThat(r.reason()).contains("parent job " + bad);
        });
        long runs = q.enqueue("r", EnqueueOptions.builder().after(bad).onParentFailure(ParentFailure.RUN).build());
        assertThat(status(q, runs)).isEqualTo(RunStatus.PENDING);
    }

    @Test
    void unknownParentsAndBadIdsAreCoded() {
        Queue<String> q = queue("deps-bad");
        long ghost = q.enqueue("ghost");
        claimOne(q).ack();
        rows.exec("DELETE FROM " + rows.q + ".job_run WHERE id = ?", ghost); // as if its record had been swept
        assertThatThrownBy(() -> q.enqueue("c", EnqueueOptions.after(List.of(ghost, 987_654_321L))))
                .isInstanceOfSatisfying(SluiceException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.PARENT_NOT_FOUND);
                    assertThat(e.getMessage()).contains(Long.toString(ghost)).contains("987654321");
                });
        assertThat(rows.scalar("SELECT count(*) FROM " + rows.q + ".job WHERE queue = 'deps-bad'")).as("nothing written").isZero();
        assertThatThrownBy(() -> q.enqueue("c", EnqueueOptions.after(List.of(-1L))))
                .isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_QUEUE_OPTIONS));
        List<Long> tooMany = new ArrayList<>();
        for (long i = 1; i <= EnqueueOptions.MAX_PARENTS + 1; i++) {
            tooMany.add(i);
        }
        assertThatThrownBy(() -> q.enqueue("c", EnqueueOptions.after(tooMany)))
                .isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_QUEUE_OPTIONS));
    }

    @Test
    void parentsMayLiveInAnotherQueue() {
        Queue<String> a = queue("deps-a");
        Queue<String> b = queue("deps-b");
        long parent = a.enqueue("p");
        long child = b.enqueue("c", EnqueueOptions.after(List.of(parent)));
        claimOne(a).ack();
        assertThat(status(b, child)).isEqualTo(RunStatus.PENDING);
    }
}
