package dev.sluice.runs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Cancellation;
import dev.sluice.EnqueueOptions;
import dev.sluice.JobRun;
import dev.sluice.Queue;
import dev.sluice.QueueOptions;
import dev.sluice.RunEvent;
import dev.sluice.RunQuery;
import dev.sluice.RunStatus;
import dev.sluice.Sluice;
import dev.sluice.Worker;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The example of docs/runs.md, kept compiling and passing. */
@SluiceTest
class RunsDocsExampleTest {
    record Invoice(String customer) {
    }

    record Total(long cents) {
    }

    @Test
    void runsPageExampleRuns(TestDatabase db) {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            Queue<Invoice> invoices = sluice.queue("invoices", Invoice.class,
                    QueueOptions.builder().keepRuns(Duration.ofDays(7)).build());

            long a = invoices.enqueue(new Invoice("ada"));
            long b = invoices.enqueue(new Invoice("bob"));
            long report = invoices.enqueue(new Invoice("report"), EnqueueOptions.builder().after(a, b).build());

            try (Worker w = invoices.work(job -> job.complete(new Total(4200)))) {
                JobRun run = invoices.await(report, Duration.ofSeconds(30));
                assertThat(run.status()).isEqualTo(RunStatus.SUCCEEDED);
                assertThat(run.result(Total.class)).isEqualTo(new Total(4200));
            }
            assertThat(invoices.events(report)).extracting(RunEvent::type)
                    .containsExactly(RunEvent.Type.ENQUEUED, RunEvent.Type.CLAIMED, RunEvent.Type.SUCCEEDED);
            assertThat(invoices.runs(RunQuery.builder().status(RunStatus.DEAD).limit(50).build()).items()).isEmpty();
            assertThat(invoices.runs(RunQuery.all()).items()).hasSize(3);
            assertThat(invoices.cancel(a)).isEqualTo(Cancellation.ALREADY_ENDED);
        }
    }
}
