package dev.sluice.runs;

import dev.sluice.EnqueueOptions;
import dev.sluice.JobHandle;
import dev.sluice.Queue;
import dev.sluice.QueueOptions;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

@SluiceTest
class ChainProbeTest {
    @Test
    void probe(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(false).build()) {
            Queue<String> q = sluice.queue("probe", String.class, QueueOptions.builder().keepRuns(Duration.ofDays(1)).build());
            int n = 200;
            List<Long> ids = new ArrayList<>();
            long t0 = System.nanoTime();
            try (java.sql.Connection c = db.connect()) {
                c.setAutoCommit(false);
                ids.add(q.enqueueInTransaction(c, "0", EnqueueOptions.NONE));
                for (int i = 1; i < n; i++) {
                    ids.add(q.enqueueInTransaction(c, "x", EnqueueOptions.after(List.of(ids.get(i - 1)))));
                }
                c.commit();
            }
            long t1 = System.nanoTime();
            long claimNs = 0, ackNs = 0;
            for (int i = 0; i < n; i++) {
                long a = System.nanoTime();
                List<JobHandle<String>> got = q.claim(2);
                long b = System.nanoTime();
                got.get(0).ack();
                long d = System.nanoTime();
                claimNs += b - a;
                ackNs += d - b;
            }
            System.out.printf("PROBE enqueue %.1f ms/job, claim %.1f ms, ack %.1f ms%n", (t1 - t0) / 1e6 / n, claimNs / 1e6 / n, ackNs / 1e6 / n);
            Queue<String> plain = sluice.queue("probe-plain", String.class, QueueOptions.builder().keepRuns(Duration.ofDays(1)).build());
            for (int i = 0; i < n; i++) {
                plain.enqueue("p");
            }
            claimNs = 0; ackNs = 0;
            for (int i = 0; i < n; i++) {
                long a = System.nanoTime();
                List<JobHandle<String>> got = plain.claim(1);
                long b = System.nanoTime();
                got.get(0).ack();
                long d = System.nanoTime();
                claimNs += b - a;
                ackNs += d - b;
            }
            System.out.printf("PROBE no-deps claim %.1f ms, ack %.1f ms%n", claimNs / 1e6 / n, ackNs / 1e6 / n);
        }
    }
}
