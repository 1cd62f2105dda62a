package dev.sluice.runs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Cancellation;
import dev.sluice.DeadReason;
import dev.sluice.JobHandle;
import dev.sluice.JobRun;
import dev.sluice.Queue;
import dev.sluice.QueueOptions;
import dev.sluice.RunEvent;
import dev.sluice.RunStatus;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Run records and event trails: every status and every event, in order, for each way a job can go. */
@SluiceTest
class RunRecordTest {
    static Sluice sluice;
    static RunFixture rows;
    static final QueueOptions KEEP = QueueOptions.builder().keepRuns(Duration.ofDays(1))
            .backoffBase(Duration.ofMillis(1)).maxBackoff(Duration.ofMillis(1)).build();

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

    private static JobHandle<String> claimOne(Queue<String> q) {
        List<JobHandle<String>> got = q.claim(1);
        assertThat(got).hasSize(1);
        return got.get(0);
    }

    private static List<RunEvent.Type> types(Queue<String> q, long id) {
        List<RunEvent> events = q.events(id);
        for (int i = 0; i < events.size(); i++) {
            assertThat(events.get(i).seq()).as("sequence of event %d", i).isEqualTo(i + 1);
        }
        return events.stream().map(RunEvent::type).toList();
    }

    @Test
    void successKeepsTheResultBytesExactlyAndTheTrailInOrder() {
        Queue<String> q = queue("runs-success");
        long id = q.enqueue("hello");
        assertThat(q.run(id)).get().extracting(JobRun::status).isEqualTo(RunStatus.PENDING);
        JobHandle<String> h = claimOne(q);
        assertThat(q.run(id)).get().extracting(JobRun::status).isEqualTo(RunStatus.RUNNING);
        byte[] result = {0, 1, 2, (byte) 0xff, 'x'};
        assertThat(h.complete(result, "application/octet-stream")).isTrue();

        JobRun run = q.run(id).orElseThrow();
        assertThat(run.status()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(run.result()).containsExactly(result);
        assertThat(run.resultContentType()).isEqualTo("application/octet-stream");
        assertThat(run.payload()).as("a record keeps the result, not the input").isNull();
        assertThat(run.attempts()).isEqualTo(1);
        assertThat(run.firstStartedAt()).isNotNull();
        assertThat(run.finishedAt()).isAfterOrEqualTo(run.firstStartedAt());
        assertThat(run.keptUntil()).isAfter(run.finishedAt().plus(Duration.ofHours(23)));
        assertThat(run.workerId()).isEqualTo(sluice.clientId());
        assertThat(types(q, id)).containsExactly(RunEvent.Type.ENQUEUED, RunEvent.Type.CLAIMED, RunEvent.Type.SUCCEEDED);
        List<RunEvent> events = q.events(id);
        assertThat(events.get(1).attempt()).isEqualTo(1);
        assertThat(events.get(1).workerId()).isEqualTo(sluice.clientId());
        // The job row is gone; events hold neither payload nor result.
        assertThat(rows.count("job", id)).isZero();
        assertThat(rows.count("job_dead", id)).isZero();
    }

    @Test
    void aTypedResultDecodes() {
        Queue<String> q = queue("runs-typed");
        long id = q.enqueue("x");
        claimOne(q).complete(new Total(42, "eur"));
        assertThat(q.run(id).orElseThrow().result(Total.class)).isEqualTo(new Total(42, "eur"));
    }

    record Total(int amount, String currency) {
    }

    @Test
    void retryThenSuccess() {
        Queue<String> q = queue("runs-retry");
        long id = q.enqueue("r");
        assertThat(claimOne(q).fail("boom")).isTrue();
        rows.makeDue(id);
        assertThat(claimOne(q).ack()).isTrue();
        assertThat(types(q, id)).containsExactly(RunEvent.Type.ENQUEUED, RunEvent.Type.CLAIMED, RunEvent.Type.RETRIED,
                RunEvent.Type.CLAIMED, RunEvent.Type.SUCCEEDED);
        RunEvent retried = q.events(id).get(2);
        assertThat(retried.detail()).isEqualTo("boom");
        assertThat(retried.nextDue()).isNotNull();
        JobRun run = q.run(id).orElseThrow();
        assertThat(run.attempts()).isEqualTo(2);
        assertThat(run.lastError()).isEqualTo("boom");
    }

    @Test
    void discardDeadAndRevive() {
        Queue<String> q = queue("runs-dead");
        long discarded = q.enqueue("d");
        claimOne(q).terminal("no such customer");
        JobRun d = q.run(discarded).orElseThrow();
        assertThat(d.status()).isEqualTo(RunStatus.DISCARDED);
        assertThat(new String(d.payload(), StandardCharsets.UTF_8)).contains("d"); // joined from the dead job
        assertThat(types(q, discarded)).containsExactly(RunEvent.Type.ENQUEUED, RunEvent.Type.CLAIMED, RunEvent.Type.DISCARDED);

        Queue<String> once = q.withOptions(KEEP.toBuilder().maxAttempts(1).build());
        long dead = once.enqueue("e");
        claimOne(once).fail("last try");
        JobRun run = q.run(dead).orElseThrow();
        assertThat(run.status()).isEqualTo(RunStatus.DEAD);
        assertThat(run.reason()).isEqualTo(DeadReason.FAILED.dbValue());
        assertThat(types(q, dead)).containsExactly(RunEvent.Type.ENQUEUED, RunEvent.Type.CLAIMED, RunEvent.Type.DEAD);

        assertThat(q.admin().redrive(dead)).isTrue();
        assertThat(rows.count("job_run", dead)).as("the record goes: the job is live again").isZero();
        assertThat(q.run(dead).orElseThrow().status()).isEqualTo(RunStatus.PENDING);
        claimOne(q).ack();
        assertThat(types(q, dead)).containsExactly(RunEvent.Type.ENQUEUED, RunEvent.Type.CLAIMED, RunEvent.Type.DEAD,
                RunEvent.Type.REVIVED, RunEvent.Type.CLAIMED, RunEvent.Type.SUCCEEDED);
        assertThat(q.run(dead).orElseThrow().status()).isEqualTo(RunStatus.SUCCEEDED);
    }

    @Test
    void rescueOfAnExpiredClaim() {
        Queue<String> q = queue("runs-rescue");
        long id = q.enqueue("s");
        claimOne(q);
        rows.expireClaim(id);
        q.admin().maintain();
        rows.makeDue(id);
        claimOne(q).ack();
        assertThat(types(q, id)).containsExactly(RunEvent.Type.ENQUEUED, RunEvent.Type.CLAIMED, RunEvent.Type.RESCUED,
                RunEvent.Type.CLAIMED, RunEvent.Type.SUCCEEDED);
    }

    @Test
    void cancelPendingAndRunning() {
        Queue<String> q = queue("runs-cancel");
        long pending = q.enqueue("p");
        assertThat(q.cancel(pending)).isEqualTo(Cancellation.CANCELLED);
        assertThat(q.run(pending).orElseThrow().status()).isEqualTo(RunStatus.CANCELLED);
        assertThat(types(q, pending)).containsExactly(RunEvent.Type.ENQUEUED, RunEvent.Type.CANCELLED);
        assertThat(q.cancel(pending)).isEqualTo(Cancellation.ALREADY_ENDED);

        long running = q.enqueue("r");
        JobHandle<String> h = claimOne(q);
        assertThat(q.cancel(running)).isEqualTo(Cancellation.REQUESTED);
        assertThat(h.cancelled()).as("no heartbeat yet").isFalse();
        assertThat(h.heartbeat()).isTrue();
        assertThat(h.cancelled()).isTrue();
        assertThat(h.ack()).isTrue();
        JobRun run = q.run(running).orElseThrow();
        assertThat(run.status()).isEqualTo(RunStatus.CANCELLED);
        assertThat(types(q, running)).containsExactly(RunEvent.Type.ENQUEUED, RunEvent.Type.CLAIMED, RunEvent.Type.CANCELLED);
    }

    @Test
    void withoutKeepRunsNothingIsKept() {
        Queue<String> q = sluice.queue("runs-off", String.class);
        long id = q.enqueue("z");
        claimOne(q).complete("result");
        assertThat(q.run(id)).isEmpty();
        assertThat(q.events(id)).isEmpty();
    }
}
