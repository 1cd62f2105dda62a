package dev.sluice.queue;

import static dev.sluice.queue.QueueFixture.assertCode;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.DeadJob;
import dev.sluice.ErrorCode;
import dev.sluice.JobHandle;
import dev.sluice.Queue;
import dev.sluice.QueueAdmin;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.util.List;
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
            assertThat(h.discard("x")).isTrue();
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
    }
}
