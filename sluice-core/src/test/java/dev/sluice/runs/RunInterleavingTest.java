package dev.sluice.runs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.Cancellation;
import dev.sluice.EnqueueOptions;
import dev.sluice.JobHandle;
import dev.sluice.Queue;
import dev.sluice.QueueOptions;
import dev.sluice.RunStatus;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Races between the run model's writers, ordered explicitly with two connections: one holds a row lock in an open
 * transaction, the other's statement is observed blocked on it (pg_blocking_pids), then the first commits. No sleeps.
 */
@SluiceTest
class RunInterleavingTest {
    static TestDatabase db;
    static Sluice sluice;
    static RunFixture rows;
    static final QueueOptions KEEP = QueueOptions.builder().keepRuns(Duration.ofDays(1)).build();
    static final ExecutorService threads = Executors.newCachedThreadPool();

    @BeforeAll
    static void setUp(TestDatabase database) {
        db = database;
        sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(false).build();
        rows = new RunFixture(db);
    }

    @AfterAll
    static void tearDown() {
        threads.shutdownNow();
        sluice.close();
    }

    private static int pid(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_backend_pid()"); ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getInt(1);
        }
    }

    /** Returns once some backend waits for a lock {@code holder} holds. */
    private static void awaitBlockedBy(int holder) {
        await().atMost(Duration.ofSeconds(30)).until(() -> rows.scalar(
                "SELECT count(*) FROM pg_stat_activity WHERE ? = ANY(pg_blocking_pids(pid))", holder) > 0);
    }

    private static JobHandle<String> claimOne(Queue<String> q) {
        List<JobHandle<String>> got = q.claim(1);
        assertThat(got).hasSize(1);
        return got.get(0);
    }

    @Test
    void aChildThatRegistersWhileItsParentsAckWaitsIsReleasedByThatAck() throws Exception {
        Queue<String> q = sluice.queue("race-child", String.class, KEEP);
        long parent = q.enqueue("p");
        JobHandle<String> h = claimOne(q);
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            long child = q.enqueueInTransaction(c, "c", EnqueueOptions.after(List.of(parent))); // holds the parent's row
            Future<Boolean> ack = threads.submit(h::ack);
            awaitBlockedBy(pid(c));
            c.commit();
            assertThat(ack.get(30, TimeUnit.SECONDS)).isTrue();
            assertThat(q.run(parent).orElseThrow().status()).isEqualTo(RunStatus.SUCCEEDED);
            assertThat(q.run(child).orElseThrow().status()).as("released by the ack that waited for it").isEqualTo(RunStatus.PENDING);
        }
    }

    @Test
    void aChildThatRegistersAfterItsParentEndedReadsTheRecord() throws Exception {
        Queue<String> q = sluice.queue("race-child-late", String.class, KEEP);
        long parent = q.enqueue("p");
        JobHandle<String> h = claimOne(q);
        assertThat(h.ack()).isTrue();
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            long child = q.enqueueInTransaction(c, "c", EnqueueOptions.after(List.of(parent)));
            c.commit();
            assertThat(q.run(child).orElseThrow().status()).isEqualTo(RunStatus.PENDING);
        }
    }

    @Test
    void aWaiterThatMarksWhileTheAckWaitsGetsARecordEvenWithoutKeepRuns() throws Exception {
        Queue<String> q = sluice.queue("race-await", String.class);
        long id = q.enqueue("a");
        JobHandle<String> h = claimOne(q);
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement("UPDATE " + rows.q + ".job SET awaited = true WHERE id = ?")) {
                ps.setLong(1, id); // what await's mark does, held open
                ps.executeUpdate();
            }
            Future<Boolean> ack = threads.submit(() -> h.complete("r"));
            awaitBlockedBy(pid(c));
            c.commit();
            assertThat(ack.get(30, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(q.await(id, Duration.ZERO).result(String.class)).isEqualTo("r");
    }

    @Test
    void aCancelThatWaitsForAClaimFlagsTheRunningJob() throws Exception {
        Queue<String> q = sluice.queue("race-cancel", String.class, KEEP);
        long id = q.enqueue("x");
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            // A claim in progress: the row is locked, and commits as processing.
            try (PreparedStatement ps = c.prepareStatement("UPDATE " + rows.q + ".job SET state = 'processing',"
                    + " claim_token = gen_random_uuid(), claim_expires_at = now() + interval '1 hour', attempts = 1"
                    + " WHERE id = ?")) {
                ps.setLong(1, id);
                ps.executeUpdate();
            }
            Future<Cancellation> cancel = threads.submit(() -> q.cancel(id));
            awaitBlockedBy(pid(c));
            c.commit();
            assertThat(cancel.get(30, TimeUnit.SECONDS)).isEqualTo(Cancellation.REQUESTED);
        }
        assertThat(rows.scalar("SELECT count(*) FROM " + rows.q + ".job WHERE id = ? AND cancel_requested", id)).isEqualTo(1);
        rows.expireClaim(id);
        q.admin().maintain();
        assertThat(q.run(id).orElseThrow()).satisfies(r -> {
            assertThat(r.status()).isEqualTo(RunStatus.CANCELLED);
            assertThat(r.reason()).contains("claim expired");
        });
    }
}
