package dev.sluice.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.JobHandle;
import dev.sluice.Queue;
import dev.sluice.QueueOptions;
import dev.sluice.Sluice;
import dev.sluice.WorkOptions;
import dev.sluice.Worker;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Failure texts of jobs are hostile: a NUL made {@code fail()} throw (SQLState 22021) and left the job
 * processing. Now they are stored cleaned and the job goes where the call says. Also: a job whose last
 * claim expired is dead ({@code claim_expired}) after exactly {@code maxAttempts} claims.
 */
@SluiceTest
class HostileJobErrorTextTest {
    static Sluice sluice;
    static QueueFixture rows;
    static final WorkOptions QUICK = WorkOptions.defaults().withPollInterval(Duration.ofMillis(50))
            .withIdleCheck(Duration.ofMillis(200)).withMaintenanceInterval(Duration.ofMillis(100))
            .withShutdownTimeout(Duration.ofMillis(200));

    @BeforeAll
    static void setUp(TestDatabase db) {
        sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build();
        sluice.system().register();
        rows = new QueueFixture(db);
    }

    @AfterAll
    static void tearDown() {
        sluice.close();
    }

    @Test
    void failWithANulIsRecordedCleanedAndTheJobIsPendingAgain() {
        Queue<String> q = sluice.queue("nul-fail", String.class);
        long id = q.enqueue("x");
        JobHandle<String> h = q.claim(1).get(0);
        assertThat(h.fail("echoed \u0000 byte and \uDC00")).isTrue();
        assertThat(rows.job(id)).satisfies(j -> {
            assertThat(j.get("state")).isEqualTo("pending");
            assertThat(j.get("attempts")).isEqualTo(1);
            assertThat(j.get("last_error")).isEqualTo("echoed \uFFFD byte and \uFFFD");
        });
    }

    @Test
    void discardWithANulIsDeadWithTheCleanedReason() {
        Queue<String> q = sluice.queue("nul-discard", String.class);
        long id = q.enqueue("x");
        assertThat(q.claim(1).get(0).terminal("bad \u0000 payload")).isTrue();
        assertThat(rows.job(id)).isNull();
        assertThat(rows.dead(id)).satisfies(d -> {
            assertThat(d.get("reason")).isEqualTo("discarded");
            assertThat(d.get("last_error")).isEqualTo("bad \uFFFD payload");
        });
    }

    @Test
    void aHandlerThrowingANulRetriesThenDiesAfterMaxAttempts() {
        Queue<String> q = sluice.queue("nul-thrown", String.class, QueueOptions.builder().maxAttempts(2)
                .backoffBase(Duration.ofMillis(10)).build());
        long id = q.enqueue("x");
        List<Integer> attempts = new CopyOnWriteArrayList<>();
        try (Worker w = q.work(job -> {
            attempts.add(job.attempt());
            throw new IllegalStateException("payload said \u0000 on attempt " + job.attempt());
        }, QUICK)) {
            await().atMost(Duration.ofSeconds(20)).until(() -> rows.dead(id) != null);
        }
        assertThat(attempts).containsExactly(1, 2);
        assertThat(rows.dead(id)).satisfies(d -> {
            assertThat(d.get("reason")).isEqualTo("failed");
            assertThat(d.get("attempts")).isEqualTo(2);
            assertThat((String) d.get("last_error")).startsWith("java.lang.IllegalStateException: payload said \uFFFD on attempt 2")
                    .contains("HostileJobErrorTextTest").doesNotContain("\u0000");
        });
    }

    @Test
    void aJobWhoseLastClaimExpiredIsDeadAfterExactlyMaxAttemptsClaims() throws Exception {
        Queue<String> q = sluice.queue("hang", String.class, QueueOptions.builder().maxAttempts(2)
                .backoffBase(Duration.ofMillis(10)).build());
        long id = q.enqueue("x");
        List<Integer> attempts = new CopyOnWriteArrayList<>();
        CountDownLatch hanging = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        try (Worker w = q.work(job -> {
            attempts.add(job.attempt());
            if (job.attempt() == 1) {
                throw new IllegalStateException("first attempt fails");
            }
            hanging.countDown();
            release.await(); // attempt 2 never finishes while its claim is valid
        }, QUICK)) {
            assertThat(hanging.await(20, TimeUnit.SECONDS)).isTrue();
            rows.expireClaim(id); // its heartbeats are refused from now on: the claim stays expired
            await().atMost(Duration.ofSeconds(20)).until(() -> rows.dead(id) != null);
            release.countDown();
        } finally {
            release.countDown();
        }
        assertThat(attempts).containsExactly(1, 2);
        assertThat(rows.job(id)).isNull();
        assertThat(rows.dead(id)).satisfies(d -> {
            assertThat(d.get("reason")).isEqualTo("claim_expired");
            assertThat(d.get("attempts")).isEqualTo(2);
        });
    }
}
