package dev.sluice.internal.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.sluice.JobHandle;
import dev.sluice.Queue;
import dev.sluice.Sluice;
import dev.sluice.WorkOptions;
import dev.sluice.Worker;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.internal.jdbc.Db;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Closing a worker, or its ack completer, returns within its bound while the database does not answer
 * (here: a test transaction holds the job row's lock, so the ack's DELETE waits); the ack is still
 * written once the database answers.
 */
@SluiceTest
class BoundedCloseTest {

    @Test
    void aCompleterWhoseAckIsBlockedClosesWithinItsLimit(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build();
             Connection blocker = db.connect()) {
            sluice.system().register();
            Queue<String> q = sluice.queue("blocked-ack", String.class);
            long id = q.enqueue("x");
            ClaimedJob<String> h = (ClaimedJob<String>) q.claim(1).get(0);
            lockJob(blocker, db, id);
            JobCompleter completer = new JobCompleter(new JobStore(new Db(db.dataSource()), db.schema()), "blocked-ack", () -> { });
            completer.start();
            CompletableFuture<Boolean> acked = completer.ack(h.id(), h.token());
            awaitAckWaitingOnLock(db);
            long started = System.nanoTime();
            assertTimeoutPreemptively(Duration.ofSeconds(10), () -> completer.close(Duration.ofMillis(300)));
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(3));
            assertThat(acked).isNotDone();
            assertThat(completer.pending()).isEqualTo(1);
            // The database answers: the ack still lands.
            blocker.rollback();
            assertThat(acked.get(10, TimeUnit.SECONDS)).isTrue();
            assertThat(jobCount(db, id)).isZero();
        }
    }

    @Test
    void aWorkerCloseReturnsWithinTheBoundWhileItsAckIsBlocked(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build();
             Connection blocker = db.connect()) {
            sluice.system().register();
            Queue<String> q = sluice.queue("blocked-close", String.class);
            long id = q.enqueue("x");
            CountDownLatch running = new CountDownLatch(1);
            CountDownLatch finish = new CountDownLatch(1);
            Worker w = q.work((JobHandle<String> job) -> {
                running.countDown();
                finish.await();
            }, WorkOptions.defaults().withPollInterval(Duration.ofMillis(50)).withShutdownTimeout(Duration.ofSeconds(5)));
            try {
                assertThat(running.await(20, TimeUnit.SECONDS)).isTrue();
                lockJob(blocker, db, id); // the claim committed; the ack's DELETE will wait for this lock
                finish.countDown();
                awaitAckWaitingOnLock(db);
                long started = System.nanoTime();
                assertTimeoutPreemptively(Duration.ofSeconds(30), w::close);
                assertThat(Duration.ofNanos(System.nanoTime() - started))
                        .isLessThan(JobCompleter.CLOSE_LIMIT.plusSeconds(5));
                assertThat(w.running()).isFalse();
                assertThat(jobCount(db, id)).isEqualTo(1);
            } finally {
                finish.countDown();
                blocker.rollback();
            }
            await().atMost(Duration.ofSeconds(20)).until(() -> jobCount(db, id) == 0);
        }
    }

    private static void lockJob(Connection blocker, TestDatabase db, long id) throws Exception {
        blocker.setAutoCommit(false);
        try (PreparedStatement ps = blocker.prepareStatement("SELECT id FROM \"" + db.schema() + "\".job WHERE id = ? FOR UPDATE")) {
            ps.setLong(1, id);
            ps.executeQuery().close();
        }
    }

    /** Waits until a backend waits on a lock while deleting from job: the ack is stuck in the database. */
    private static void awaitAckWaitingOnLock(TestDatabase db) {
        await().atMost(Duration.ofSeconds(20)).until(() -> {
            try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM pg_stat_activity"
                    + " WHERE wait_event_type = 'Lock' AND query LIKE '%DELETE FROM%job%'");
                 ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1) > 0;
            }
        });
    }

    private static long jobCount(TestDatabase db, long id) throws Exception {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM \"" + db.schema()
                + "\".job WHERE id = ?")) {
            ps.setLong(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }
}
