package dev.sluice.queue;

import static dev.sluice.queue.QueueFixture.assertCode;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.DeadJob;
import dev.sluice.DeadReason;
import dev.sluice.EnqueueOptions;
import dev.sluice.ErrorCode;
import dev.sluice.JobHandle;
import dev.sluice.Queue;
import dev.sluice.QueueAdmin;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.util.Arrays;
import java.util.List;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** queue.admin(): the dead-letter vocabulary shared with consumer groups. */
@SluiceTest
class QueueAdminTest {
    static Sluice sluice;

    @BeforeAll
    static void setUp(TestDatabase db) {
        sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build();
        sluice.system().register();
    }

    @AfterAll
    static void tearDown() {
        sluice.close();
    }

    private static List<Long> deadJobs(Queue<String> q, int n) {
        for (int i = 0; i < n; i++) {
            q.enqueue("p" + i);
        }
        for (JobHandle<String> h : q.claim(n)) {
            assertThat(h.terminal("x")).isTrue();
        }
        return q.admin().deadLetters(null, 100).items().stream().map(DeadJob::id).toList();
    }

    @Test
    void redriveAndPurgeByIdsAndAll() {
        Queue<String> q = sluice.queue("admin-dead", String.class);
        QueueAdmin admin = q.admin();
        List<Long> ids = deadJobs(q, 4);
        assertThat(ids).hasSize(4);
        assertThat(admin.stats().dead()).isEqualTo(4);

        assertThat(admin.redrive(List.of(ids.get(0), ids.get(1)))).isEqualTo(2);
        assertThat(admin.redrive(ids.get(0))).as("no longer dead").isFalse();
        assertCode(ErrorCode.JOB_NOT_FOUND, () -> admin.redrive(List.of(ids.get(2), 999_999L)));
        assertThat(admin.deadLetters(null, 100).items()).hasSize(2);

        assertThat(admin.purge(List.of(ids.get(2)))).isEqualTo(1);
        assertThat(admin.purgeAll()).isEqualTo(1);
        assertThat(admin.deadLetters(null, 100).items()).isEmpty();
        assertThat(admin.job(ids.get(0))).isPresent();
    }

    @Test
    void badInputIsCoded() {
        QueueAdmin admin = sluice.queue("admin-bad", String.class).admin();
        assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> admin.deadLetters(null, 0));
        assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> admin.deadLetters("not-a-cursor", 3));
        assertThat(admin.redrive(List.of())).isZero();
        assertThat(admin.purge(List.of())).isZero();
        assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> admin.redrive((List<Long>) null));
        assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> admin.purge(null));
        assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> admin.redrive(Arrays.asList(1L, null)));
        List<Long> tooMany = LongStream.rangeClosed(1, 10_001).boxed().toList();
        assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> admin.redrive(tooMany));
        assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> admin.purge(tooMany));
        assertCode(ErrorCode.INVALID_NAME, () -> sluice.queue("Bad Queue").admin().redrive(List.of(1L)));
    }

    @Test
    void purgeOfAnIdThatIsNotADeadLetterChangesNothing() {
        Queue<String> q = sluice.queue("admin-purge", String.class);
        List<Long> ids = deadJobs(q, 2);
        long live = q.enqueue("live");
        assertCode(ErrorCode.JOB_NOT_FOUND, () -> q.admin().purge(List.of(ids.get(0), live)));
        assertThat(q.admin().stats().dead()).isEqualTo(2);
        assertThat(q.admin().job(live)).isPresent();
        assertThat(q.admin().purge(List.of(ids.get(1), ids.get(0), ids.get(1)))).isEqualTo(2);
    }

    @Test
    void redriveAllMovesEveryDeadLetterButLeavesTakenUniqueKeysDead() {
        Queue<String> q = sluice.queue("admin-redrive-all", String.class);
        assertThat(q.admin().redriveAll()).as("none dead").isZero();
        List<Long> plain = deadJobs(q, 3);
        // two dead jobs sharing a unique key: only the older one can come back
        long k1 = q.enqueue("k1", EnqueueOptions.builder().uniqueKey("k").build());
        assertThat(q.claim(1).get(0).terminal("x")).isTrue();
        long k2 = q.enqueue("k2", EnqueueOptions.builder().uniqueKey("k").build());
        assertThat(q.claim(1).get(0).terminal("x")).isTrue();
        // a dead job whose unique key a live job holds stays dead
        long held = q.enqueue("h1", EnqueueOptions.builder().uniqueKey("held").build());
        assertThat(q.claim(1).get(0).terminal("x")).isTrue();
        long holder = q.enqueue("h2", EnqueueOptions.builder().uniqueKey("held").build());

        assertThat(q.admin().redriveAll()).isEqualTo(4);
        assertThat(q.admin().deadLetters(null, 100).items()).extracting(DeadJob::id).containsExactly(k2, held);
        for (long id : List.of(plain.get(0), plain.get(1), plain.get(2), k1, holder)) {
            assertThat(q.admin().job(id)).as("job %d", id).hasValueSatisfying(j -> assertThat(j.attempts()).isZero());
        }
        assertThat(q.admin().redriveAll()).as("nothing left that can move").isZero();
    }

    @Test
    @SuppressWarnings("deprecation")
    void deprecatedAliasesStillWork() {
        Queue<String> q = sluice.queue("admin-alias", String.class);
        List<Long> ids = deadJobs(q, 3);
        assertThat(q.dead(null, 10).items()).hasSize(3);
        assertThat(q.revive(List.of(ids.get(0)))).isEqualTo(1);
        assertThat(q.revive(ids.get(1))).isTrue();
        assertThat(q.stats().dead()).isEqualTo(1);
        assertCode(ErrorCode.JOB_NOT_FOUND, () -> q.purgeDead(List.of(ids.get(0))));
        assertThat(q.purgeDead()).isEqualTo(1);
        assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> q.revive((List<Long>) null));

        // discard is the former name of terminal: the same dead letter, the same stored reason
        Queue<String> other = sluice.queue("admin-alias-discard", String.class);
        long id = other.enqueue("d");
        assertThat(other.claim(1).get(0).discard("gone")).isTrue();
        assertThat(other.admin().deadLetters(null, 10).items()).singleElement().satisfies(d -> {
            assertThat(d.id()).isEqualTo(id);
            assertThat(d.reason()).isEqualTo(DeadReason.DISCARDED);
            assertThat(d.lastError()).isEqualTo("gone");
        });
    }
}
