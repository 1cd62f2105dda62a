package dev.sluice.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.DeadJob;
import dev.sluice.EnqueueOptions;
import dev.sluice.JobClaim;
import dev.sluice.JobHandle;
import dev.sluice.JobInfo;
import dev.sluice.JobState;
import dev.sluice.Page;
import dev.sluice.Queue;
import dev.sluice.QueueStats;
import dev.sluice.Sluice;
import dev.sluice.WorkOptions;
import dev.sluice.Worker;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** The examples of docs/queues.md, kept compiling and passing. */
@SluiceTest
class QueueDocsExampleTest {
    record Email(String to, String subject) {
    }

    @Test
    void queuesPageExampleRuns(TestDatabase db) {
        DataSource pool = db.dataSource();
        List<String> sent = new CopyOnWriteArrayList<>();

        Sluice sluice = Sluice.builder().dataSource(pool).schema(db.schema()).build();
        sluice.system().register();

        Queue<Email> emails = sluice.queue("emails", Email.class);
        long id = emails.enqueue(new Email("ada@example.com", "Welcome"));
        long invoice = emails.enqueue(new Email("bob@example.com", "Your invoice"), EnqueueOptions.builder()
                .priority(10)
                .delay(Duration.ofMinutes(5))
                .expiresAt(Instant.now().plus(Duration.ofHours(1)))
                .uniqueKey("invoice-2026-001")
                .header("traceparent", "00-abc-01")
                .build());

        try (Worker worker = emails.work(job -> sent.add(job.payload().to()),
                WorkOptions.defaults().withConcurrency(8))) {
            await().atMost(Duration.ofSeconds(10)).until(() -> sent.contains("ada@example.com"));
        }
        assertThat(sent).containsExactly("ada@example.com");

        QueueStats stats = emails.admin().stats();
        Page<JobInfo> next = emails.admin().jobs(JobState.PENDING, null, 50);
        Page<DeadJob> dead = emails.admin().deadLetters(null, 50);
        assertThat(stats).isEqualTo(new QueueStats(1, 1, 0, 0));
        assertThat(next.items()).extracting(JobInfo::id).containsExactly(invoice);
        assertThat(dead.items()).isEmpty();
        assertThat(emails.admin().job(id)).isEmpty();
        assertThat(emails.admin().redrive(id)).as("acked jobs leave nothing to revive").isFalse();
        assertThat(emails.admin().purgeAll()).isZero();
        sluice.close();
    }

    /** What the page's {@code handOut(id, token, payload)} passes to a worker that keeps no handle. */
    record HandedOut(long id, String token, byte[] payload) {
    }

    @Test
    void claimsHeldElsewhereExampleRuns(TestDatabase db) {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            Queue<byte[]> thumbnails = sluice.queue("thumbnails");
            long enqueued = thumbnails.enqueue(new byte[] {1, 2, 3});
            List<HandedOut> handed = new java.util.ArrayList<>();

            List<JobHandle<byte[]>> got = thumbnails.claim(10, Duration.ofSeconds(20));
            for (JobHandle<byte[]> job : got) {
                handed.add(new HandedOut(job.id(), job.claimToken(), job.payloadBytes()));
            }
            assertThat(handed).singleElement().satisfies(h -> {
                assertThat(h.id()).isEqualTo(enqueued);
                assertThat(h.payload()).containsExactly(1, 2, 3);
            });

            long id = handed.get(0).id();
            String token = handed.get(0).token();
            byte[] png = {(byte) 0x89, 'P', 'N', 'G'};
            JobClaim claim = thumbnails.claimed(id, token);
            Optional<Instant> until = claim.heartbeat();
            boolean done = claim.complete(png, "image/png");
            assertThat(until).isPresent();
            assertThat(done).isTrue();
            assertThat(claim.ack()).as("resolved once").isFalse();
            assertThat(thumbnails.admin().job(id)).as("done: the row is gone").isEmpty();
        }
    }
}
