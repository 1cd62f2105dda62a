package dev.sluice.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.ErrorCode;
import dev.sluice.JobHandle;
import dev.sluice.Queue;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.WorkOptions;
import dev.sluice.Worker;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * Queue workers run on their client's shared runtime: threads do not grow with the number of workers, a
 * runtime of one scheduler and one handler thread still acks everything (no task waits for another), and a
 * worker refused by a closed client starts nothing.
 */
@SluiceTest
class QueueRuntimeTest {
    private static final WorkOptions QUICK = WorkOptions.defaults().withPollInterval(Duration.ofMillis(200));

    /** Live threads of this client: named "sluice-..." and carrying its schema. */
    private static List<String> clientThreads(String schema) {
        List<String> names = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive() && t.getName().startsWith("sluice-") && t.getName().contains(schema)) {
                names.add(t.getName());
            }
        }
        return names;
    }

    @Test
    void thirtyWorkersOfOneClientRunOnTheSharedThreads(TestDatabase db) throws Exception {
        int queues = 30;
        int perQueue = 10;
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).runtimeThreads(2, 4).build()) {
            sluice.system().register();
            CountDownLatch done = new CountDownLatch(queues * perQueue);
            Set<Long> seen = ConcurrentHashMap.newKeySet();
            List<Worker> workers = new ArrayList<>();
            int peak = 0;
            for (int i = 0; i < queues; i++) {
                // The queue's name carries the schema, so threads named after the queue count as the client's.
                Queue<String> q = sluice.queue(db.schema() + "-q" + i, String.class);
                for (int j = 0; j < perQueue; j++) {
                    q.enqueue("job " + j);
                }
                workers.add(q.work((JobHandle<String> job) -> {
                    seen.add(job.id());
                    done.countDown();
                }, QUICK));
                peak = Math.max(peak, clientThreads(db.schema()).size());
            }
            assertThat(done.await(90, TimeUnit.SECONDS)).as("every job of every queue handled").isTrue();
            assertThat(seen).hasSize(queues * perQueue);
            List<String> threads = clientThreads(db.schema());
            peak = Math.max(peak, threads.size());
            assertThat(peak).as("threads of the client with %s workers running: %s", queues, threads).isLessThanOrEqualTo(2 + 4 + 3);
            Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> jobsLeft(db, db.schema() + "-q%") == 0);
            for (Worker w : workers) {
                w.close();
                assertThat(w.running()).isFalse();
            }
        }
        Awaitility.await().atMost(Duration.ofSeconds(15)).until(() -> clientThreads(db.schema()).isEmpty());
    }

    /** One scheduler and one handler thread; handlers that ack themselves wait on the handler thread only. */
    @Test
    void oneSchedulerAndOneHandlerThreadAckEveryJob(TestDatabase db) throws Exception {
        int jobs = 200;
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).runtimeThreads(1, 1).build()) {
            sluice.system().register();
            Queue<String> q = sluice.queue("tight", String.class);
            for (int i = 0; i < jobs; i++) {
                q.enqueue("job " + i);
            }
            CountDownLatch handled = new CountDownLatch(jobs);
            Set<Long> refused = ConcurrentHashMap.newKeySet();
            // Half the handlers ack themselves: the handler thread waits for the completer, a scheduler task.
            try (Worker w = q.work((JobHandle<String> job) -> {
                if (job.id() % 2 == 0 && !job.ack()) {
                    refused.add(job.id());
                }
                handled.countDown();
            }, QUICK.withConcurrency(4).withPrefetch(4))) {
                assertThat(handled.await(60, TimeUnit.SECONDS)).as("every job handled").isTrue();
                Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> jobsLeft(db, "tight") == 0);
                assertThat(refused).as("acks refused").isEmpty();
                assertThat(w.running()).isTrue();
            }
            assertThat(deadJobs(db, "tight")).isZero();
        }
    }

    @Test
    void aWorkerOnAClosedClientIsRefusedAndStartsNoThread(TestDatabase db) {
        Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build();
        sluice.system().register();
        Queue<String> q = sluice.queue("late", String.class);
        q.enqueue("x");
        sluice.close();
        assertThatThrownBy(() -> q.work((JobHandle<String> job) -> { }))
                .isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CLIENT_CLOSED));
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> clientThreads(db.schema()).isEmpty());
        assertThat(new QueueFixture(db).scalar("SELECT count(*) FROM \"" + db.schema() + "\".job WHERE queue = 'late' AND state = 'pending'"))
                .as("the job was never claimed").isEqualTo(1);
    }

    /** Jobs of the queues named like {@code queues} still in the job table (the test class shares one schema). */
    private static long jobsLeft(TestDatabase db, String queues) {
        return new QueueFixture(db).scalar("SELECT count(*) FROM \"" + db.schema() + "\".job WHERE queue LIKE ?", queues);
    }

    private static long deadJobs(TestDatabase db, String queue) {
        return new QueueFixture(db).scalar("SELECT count(*) FROM \"" + db.schema() + "\".job_dead WHERE queue = ?", queue);
    }
}
