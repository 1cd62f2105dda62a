package dev.sluice.queue;

import static dev.sluice.queue.QueueFixture.assertCode;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.sluice.ErrorCode;
import dev.sluice.JobClaim;
import dev.sluice.JobHandle;
import dev.sluice.JobRun;
import dev.sluice.Queue;
import dev.sluice.QueueOptions;
import dev.sluice.RunStatus;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Resolving a claim by job id and claim token ({@code Queue.claimed}), as a stateless HTTP worker does. */
@SluiceTest
class JobClaimTest {
    static Sluice sluice;
    static QueueFixture rows;
    static final QueueOptions FAST = QueueOptions.builder().backoffBase(Duration.ofMillis(1)).maxBackoff(Duration.ofMillis(1))
            .build();
    static final QueueOptions KEEP = QueueOptions.builder().keepRuns(Duration.ofDays(1)).build();

    @BeforeAll
    static void setUp(TestDatabase db) {
        sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(false).build();
        sluice.system().register();
        rows = new QueueFixture(db);
    }

    @AfterAll
    static void tearDown() {
        sluice.close();
    }

    static JobHandle<String> claimOne(Queue<String> q, String payload) {
        long id = q.enqueue(payload);
        List<JobHandle<String>> got = q.claim(1);
        assertThat(got).singleElement().extracting(JobHandle::id).isEqualTo(id);
        return got.get(0);
    }

    @Test
    void theClaimTokenIsTheRowsAndAcksOnce() {
        Queue<String> q = sluice.queue("jc.ack", String.class);
        JobHandle<String> h = claimOne(q, "a");
        assertThat(h.claimToken()).isEqualTo(rows.job(h.id()).get("claim_token").toString());
        assertThat(UUID.fromString(h.claimToken()).toString()).isEqualTo(h.claimToken());

        JobClaim claim = q.claimed(h.id(), h.claimToken());
        assertThat(claim.id()).isEqualTo(h.id());
        assertThat(claim.toString()).doesNotContain(h.claimToken());
        assertThat(claim.ack()).isTrue();
        assertThat(rows.job(h.id())).as("acked: the row is gone").isNull();
        assertThat(claim.ack()).as("a double ack").isFalse();
        assertThat(q.claimed(h.id(), h.claimToken()).ack()).isFalse();
        assertThat(claim.heartbeat()).isEmpty();
        assertThat(claim.fail("late")).isFalse();
        assertThat(h.ack()).as("the original handle sees it resolved too").isFalse();
        assertThat(rows.dead(h.id())).isNull();
    }

    @Test
    void aWrongTokenChangesNothing() {
        Queue<String> q = sluice.queue("jc.wrong", String.class);
        JobHandle<String> h = claimOne(q, "w");
        Map<String, Object> before = rows.job(h.id());
        JobClaim wrong = q.claimed(h.id(), UUID.randomUUID().toString());
        assertThat(wrong.ack()).isFalse();
        assertThat(wrong.complete("r".getBytes(StandardCharsets.UTF_8), "text/plain")).isFalse();
        assertThat(wrong.retry(Duration.ZERO)).isFalse();
        assertThat(wrong.fail("boom")).isFalse();
        assertThat(wrong.terminal("gone")).isFalse();
        assertThat(wrong.heartbeat()).isEmpty();
        assertThat(q.claimed(h.id() + 1_000_000, h.claimToken()).ack()).as("the right token on another id").isFalse();
        assertThat(rows.job(h.id())).as("untouched").isEqualTo(before);

        // Any spelling of the right token: the UUID is what counts.
        JobClaim right = q.claimed(h.id(), h.claimToken().toUpperCase(java.util.Locale.ROOT));
        Instant expiry = h.claimExpiresAt();
        await().atMost(Duration.ofSeconds(10)).until(() -> right.heartbeat().map(t -> t.isAfter(expiry)).orElse(false));
        assertThat(((Timestamp) rows.job(h.id()).get("claim_expires_at")).toInstant()).isAfter(expiry);
        assertThat(right.terminal("done with it")).isTrue();
        assertThat(rows.dead(h.id())).containsEntry("reason", "discarded").containsEntry("last_error", "done with it");
    }

    @Test
    void retryAndFailPutTheJobBackTerminalKillsIt() {
        Queue<String> q = sluice.queue("jc.settle", String.class, FAST);
        JobHandle<String> h = claimOne(q, "r");
        JobClaim c = q.claimed(h.id(), h.claimToken());
        assertThat(c.retry(Duration.ofMinutes(5))).isTrue();
        Map<String, Object> row = rows.job(h.id());
        assertThat(row).containsEntry("state", "pending").containsEntry("attempts", 1);
        assertThat(rows.seconds("SELECT extract(epoch FROM run_at - now()) FROM " + rows.q + ".job WHERE id = ?", h.id()))
                .isBetween(200.0, 301.0);
        assertThat(c.retry(Duration.ZERO)).as("already resolved").isFalse();
        assertThat(c.heartbeat()).isEmpty();

        rows.makeDue(h.id());
        JobHandle<String> again = q.claim(1).get(0);
        assertThat(again.attempt()).isEqualTo(2);
        assertThat(again.claimToken()).isNotEqualTo(h.claimToken());
        assertThat(c.ack()).as("the old token does not name the new claim").isFalse();
        JobClaim c2 = q.claimed(again.id(), again.claimToken());
        assertThat(c2.fail("bad \u0000 byte \u001b[2J")).isTrue();
        assertThat(rows.job(h.id())).containsEntry("state", "pending").containsEntry("last_error", "bad \uFFFD byte \uFFFD[2J");
        assertThat(c2.fail("twice")).isFalse();

        JobHandle<String> third = await().atMost(Duration.ofSeconds(10)).until(() -> q.claim(1), l -> !l.isEmpty()).get(0);
        assertThat(third.attempt()).isEqualTo(3);
        assertThat(q.claimed(third.id(), third.claimToken()).terminal("no \u0007 more")).isTrue();
        assertThat(rows.job(h.id())).isNull();
        assertThat(rows.dead(h.id())).containsEntry("reason", "discarded").containsEntry("last_error", "no \uFFFD more");
    }

    @Test
    void anExpiredClaimCanNoLongerBeResolved() {
        Queue<String> q = sluice.queue("jc.expired", String.class,
                QueueOptions.builder().visibilityTimeout(Duration.ofMillis(200)).build());
        JobHandle<String> h = claimOne(q, "slow");
        JobClaim c = q.claimed(h.id(), h.claimToken());
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).until(() -> rows.scalar(
                "SELECT count(*) FROM " + rows.q + ".job WHERE id = ? AND claim_expires_at <= now()", h.id()) == 1);
        assertThat(c.heartbeat()).isEmpty();
        assertThat(c.ack()).isFalse();
        assertThat(c.complete(new byte[] {1}, "application/octet-stream")).isFalse();
        assertThat(c.retry(Duration.ZERO)).isFalse();
        assertThat(c.fail("late")).isFalse();
        assertThat(c.terminal("late")).isFalse();
        assertThat(rows.job(h.id())).as("still the expired claim, for the rescue").containsEntry("state", "processing")
                .containsEntry("attempts", 1);
    }

    @Test
    void ackAndCompleteKeepRecordsOnAQueueThatKeepsRuns() {
        Queue<String> q = sluice.queue("jc.kept", String.class, KEEP);
        JobHandle<String> plain = claimOne(q, "p");
        assertThat(q.claimed(plain.id(), plain.claimToken()).ack()).isTrue();
        assertThat(q.run(plain.id())).map(JobRun::status).contains(RunStatus.SUCCEEDED);

        JobHandle<String> withResult = claimOne(q, "r");
        JobClaim c = q.claimed(withResult.id(), withResult.claimToken());
        assertThat(c.complete("{\"ok\":true}".getBytes(StandardCharsets.UTF_8), "application/json")).isTrue();
        JobRun run = q.run(withResult.id()).orElseThrow();
        assertThat(run.status()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(new String(run.result(), StandardCharsets.UTF_8)).isEqualTo("{\"ok\":true}");
        assertThat(run.resultContentType()).isEqualTo("application/json");
        assertThat(c.complete(new byte[0], "text/plain")).as("completed once").isFalse();

        JobHandle<String> cancelled = claimOne(q, "c");
        q.cancel(cancelled.id());
        JobClaim cc = q.claimed(cancelled.id(), cancelled.claimToken());
        assertThat(cc.cancelled()).isFalse();
        assertThat(cc.heartbeat()).isPresent();
        assertThat(cc.cancelled()).as("learnt at the heartbeat").isTrue();
        assertThat(cc.ack()).isTrue();
        assertThat(q.run(cancelled.id())).map(JobRun::status).contains(RunStatus.CANCELLED);
    }

    @Test
    void resultsAreCheckedAsHandlesCheckThem() {
        Queue<String> q = sluice.queue("jc.limits", String.class, QueueOptions.builder().maxPayloadBytes(8).build());
        JobHandle<String> h = claimOne(q, "x");
        JobClaim c = q.claimed(h.id(), h.claimToken());
        assertCode(ErrorCode.PAYLOAD_TOO_LARGE, () -> c.complete(new byte[9], "text/plain"));
        assertCode(ErrorCode.INVALID_ARGUMENT, () -> c.complete(new byte[1], ""));
        assertCode(ErrorCode.INVALID_ARGUMENT, () -> c.complete(new byte[1], "text/\u001b[2J"));
        assertCode(ErrorCode.INVALID_ARGUMENT, () -> c.complete(new byte[1], "t".repeat(256)));
        assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> c.retry(Duration.ofMillis(-1)));
        assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> c.retry(Duration.ofDays(3651)));
        assertThatThrownBy(() -> c.fail(null)).isInstanceOf(NullPointerException.class);
        assertThat(rows.job(h.id())).as("refused before any round trip").containsEntry("state", "processing");
        assertThat(c.complete(new byte[8], "application/octet-stream")).isTrue();
    }

    @Test
    void badIdsAndTokensAreCodedWithoutRepeatingTheToken() {
        Queue<String> q = sluice.queue("jc.bad", String.class);
        String token = UUID.randomUUID().toString();
        assertCode(ErrorCode.INVALID_ARGUMENT, () -> q.claimed(0, token));
        assertCode(ErrorCode.INVALID_ARGUMENT, () -> q.claimed(-5, token));
        for (String bad : new String[] {null, "", "not-a-uuid", "0-0-0-0-0", "{" + token + "}", token + " ", token.replace('-', '_'),
                token.substring(0, 35) + "g", token.substring(0, 35) + "\u0000", "x".repeat(1_000_000)}) {
            assertThatThrownBy(() -> q.claimed(1, bad)).isInstanceOfSatisfying(SluiceException.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
                assertThat(e.getMessage()).doesNotContain(token).hasSizeLessThan(300);
            });
        }
        assertCode(ErrorCode.INVALID_NAME, () -> sluice.queue("Bad Queue", String.class).claimed(1, token));
        assertThat(q.claimed(1, token).heartbeat()).as("a well-formed stranger holds nothing").isEqualTo(Optional.empty());
    }
}
