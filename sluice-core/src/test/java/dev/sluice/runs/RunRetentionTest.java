package dev.sluice.runs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.ErrorCode;
import dev.sluice.JobHandle;
import dev.sluice.JobRun;
import dev.sluice.MaintenanceReport;
import dev.sluice.Page;
import dev.sluice.Queue;
import dev.sluice.QueueOptions;
import dev.sluice.RunQuery;
import dev.sluice.RunStatus;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Operator reads of runs (pages, filters) and the independent retention of records and events; bad input. */
@SluiceTest
class RunRetentionTest {
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
    void pagesAndFilters() {
        Queue<String> q = sluice.queue("runs-pages", String.class, QueueOptions.builder().keepRuns(Duration.ofDays(1)).build());
        List<Long> ok = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            ok.add(q.enqueue("s" + i, dev.sluice.EnqueueOptions.builder().header("tenant", i % 2 == 0 ? "even" : "odd")
                    .uniqueKey("key-" + i).build()));
            q.claim(1).get(0).ack();
        }
        long cancelled = q.enqueue("c");
        q.cancel(cancelled);

        List<Long> seen = new ArrayList<>();
        String cursor = null;
        do {
            Page<JobRun> page = q.runs(RunQuery.builder().limit(2).cursor(cursor).build());
            assertThat(page.items().size()).isLessThanOrEqualTo(2);
            page.items().forEach(r -> seen.add(r.id()));
            cursor = page.next();
        } while (cursor != null);
        List<Long> newestFirst = new ArrayList<>(ok);
        newestFirst.add(cancelled);
        java.util.Collections.reverse(newestFirst);
        assertThat(seen).containsExactlyElementsOf(newestFirst);

        assertThat(q.runs(RunQuery.builder().status(RunStatus.CANCELLED).build()).items()).extracting(JobRun::id)
                .containsExactly(cancelled);
        assertThat(q.runs(RunQuery.builder().header("tenant", "odd").build()).items()).extracting(JobRun::id)
                .containsExactly(ok.get(3), ok.get(1));
        assertThat(q.runs(RunQuery.builder().uniqueKey("key-2").build()).items()).extracting(JobRun::id).containsExactly(ok.get(2));
        assertThat(q.runs(RunQuery.builder().since(Instant.now().plusSeconds(3600)).build()).items()).isEmpty();
        assertThat(q.runs(RunQuery.builder().until(Instant.now().minusSeconds(3600)).build()).items()).isEmpty();
    }

    @Test
    void recordsAndEventsAreSweptIndependently() {
        Queue<String> q = sluice.queue("runs-sweep", String.class, QueueOptions.builder().keepRuns(Duration.ofDays(1))
                .keepEvents(Duration.ofHours(1)).build());
        long id = q.enqueue("s");
        JobHandle<String> h = q.claim(1).get(0);
        h.ack();
        assertThat(rows.count("job_event", id)).isEqualTo(3);
        assertThat(rows.scalar("SELECT count(*) FROM " + rows.q + ".job_event WHERE job_id = ? AND purge_after < now()"
                + " + interval '61 minutes'", id)).as("events kept an hour").isEqualTo(3);
        // An hour later: the events are due, the record is not.
        rows.exec("UPDATE " + rows.q + ".job_event SET purge_after = now() - interval '1 second' WHERE job_id = ?", id);
        MaintenanceReport r = sluice.maintenance().runOnce();
        assertThat(r.ok()).as(r.toString()).isTrue();
        assertThat(r.removed("job_events")).isGreaterThanOrEqualTo(3);
        assertThat(rows.count("job_event", id)).isZero();
        assertThat(rows.count("job_run", id)).isEqualTo(1);
        rows.exec("UPDATE " + rows.q + ".job_run SET purge_after = now() - interval '1 second' WHERE id = ?", id);
        r = sluice.maintenance().runOnce();
        assertThat(r.removed("job_runs")).isGreaterThanOrEqualTo(1);
        assertThat(q.run(id)).isEmpty();
    }

    @Test
    void badInputIsCoded() {
        Queue<String> q = sluice.queue("runs-bad", String.class, QueueOptions.builder().keepRuns(Duration.ofDays(1))
                .maxPayloadBytes(16).build());
        assertCode(() -> RunQuery.builder().limit(0).build(), ErrorCode.INVALID_ARGUMENT);
        assertCode(() -> RunQuery.builder().limit(1001).build(), ErrorCode.INVALID_ARGUMENT);
        assertCode(() -> RunQuery.builder().status(RunStatus.PENDING).build(), ErrorCode.INVALID_ARGUMENT);
        assertCode(() -> RunQuery.builder().since(Instant.now()).until(Instant.now().minusSeconds(1)).build(),
                ErrorCode.INVALID_ARGUMENT);
        assertCode(() -> new RunQuery(null, null, null, null, "tenant", null, null, 10), ErrorCode.INVALID_ARGUMENT);
        assertCode(() -> q.runs(RunQuery.builder().cursor("not-a-cursor").build()), ErrorCode.INVALID_ARGUMENT);
        assertCode(() -> RunStatus.parse("bogus\u0007"), ErrorCode.INVALID_ARGUMENT);
        assertCode(() -> QueueOptions.builder().keepEvents(Duration.ofHours(1)).build(), ErrorCode.INVALID_QUEUE_OPTIONS);
        assertCode(() -> QueueOptions.builder().keepRuns(Duration.ZERO).build(), ErrorCode.INVALID_QUEUE_OPTIONS);
        assertCode(() -> QueueOptions.builder().keepRuns(Duration.ofDays(3651)).build(), ErrorCode.INVALID_QUEUE_OPTIONS);

        long id = q.enqueue("x");
        JobHandle<String> h = q.claim(1).get(0);
        assertCode(() -> h.complete(new byte[17], "application/octet-stream"), ErrorCode.PAYLOAD_TOO_LARGE);
        assertCode(() -> h.complete(new byte[1], "text/\u0000plain"), ErrorCode.INVALID_ARGUMENT);
        assertThat(q.run(id).orElseThrow().status()).as("a refused result changes nothing").isEqualTo(RunStatus.RUNNING);
        assertThat(h.complete(new byte[16], "application/octet-stream")).isTrue();
        assertCode(() -> q.cancel(987_654_321L), ErrorCode.JOB_NOT_FOUND);
    }

    private static void assertCode(org.assertj.core.api.ThrowableAssert.ThrowingCallable call, ErrorCode code) {
        assertThatThrownBy(call).isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(code));
    }
}
