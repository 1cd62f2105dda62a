package dev.sluice.queue;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.EnqueueOptions;
import dev.sluice.JobHandle;
import dev.sluice.Queue;
import dev.sluice.QueueInfo;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link Sluice#queues()}: every queue with live or dead jobs, counted by state, in one listing. */
@SluiceTest
class QueueListingTest {

    @Test
    void listsEveryQueueWithLiveOrDeadJobsAndItsCounts(TestDatabase db) {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            assertThat(sluice.queues()).as("no control plane yet").isEmpty();
            sluice.system().register();
            assertThat(sluice.queues()).as("queues are rows: none before the first job").isEmpty();

            Queue<String> emails = sluice.queue("emails", String.class);
            emails.enqueue("due-1");
            emails.enqueue("due-2");
            emails.enqueue("later", EnqueueOptions.delay(Duration.ofHours(1)));
            emails.enqueue("claimed");
            // Claim order is run_at, id: the two oldest due jobs; fail the first one for good.
            List<JobHandle<String>> claimed = emails.claim(2);
            assertThat(claimed).hasSize(2);
            claimed.get(0).terminal("bad address");

            Queue<byte[]> reports = sluice.queue("reports");
            reports.enqueue(new byte[] {1});
            reports.claim(1).get(0).terminal("gone");
            // A queue whose only job is dead is still listed.

            Queue<String> aaa = sluice.queue("aaa", String.class);
            aaa.enqueue("x");

            assertThat(sluice.queues()).containsExactly(
                    new QueueInfo("aaa", 1, 0, 0, 0),
                    new QueueInfo("emails", 2, 1, 1, 1),
                    new QueueInfo("reports", 0, 0, 0, 1));
            for (QueueInfo info : sluice.queues()) {
                assertThat(info.stats()).as(info.name()).isEqualTo(sluice.queue(info.name()).admin().stats());
            }

            // A queue disappears from the listing once it has no rows left.
            aaa.claim(1).get(0).ack();
            reports.admin().purgeAll();
            assertThat(sluice.queues()).extracting(QueueInfo::name).containsExactly("emails");
        }
    }
}
