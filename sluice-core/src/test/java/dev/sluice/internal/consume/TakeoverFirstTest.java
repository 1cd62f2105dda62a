package dev.sluice.internal.consume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.ConsumeOptions;
import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.Outcome;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * A consumer with a backlog of fresh messages takes a dead holder's expired ranges over before it claims more fresh
 * ones: the dead holder's messages have waited a lease already, and behind a backlog they would wait for all of it.
 */
@SluiceTest
class TakeoverFirstTest {
    private static final ConsumeOptions OPTS = ConsumeOptions.defaults().withLeaseTimeout(Duration.ofSeconds(1))
            .withPollInterval(Duration.ofMillis(50)).withBatchSize(1).withShutdownTimeout(Duration.ofSeconds(1));

    private static long scalar(TestDatabase db, String sql, long param) throws Exception {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setLong(1, param);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    @Test
    void expiredRangesAreTakenOverBeforeMoreFreshMessagesAreClaimed(TestDatabase db) throws Exception {
        ExecutorService aThreads = Executors.newCachedThreadPool();
        AtomicBoolean producing = new AtomicBoolean(true);
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(false).build();
             Sluice other = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(false).build()) {
            long sid = sluice.stream("first").register().id();
            ConsumerGroup<String> group = sluice.stream("first", String.class).consumerGroup("g");
            group.register();
            Producer<String> p = sluice.stream("first", String.class).producer();
            long lastOfA = 0;
            for (int i = 0; i < 3; i++) {
                lastOfA = p.produce("a" + i).id();
            }
            // A holds the three messages in three ranges (batch 1), its handlers block, and it dies: no more renewals.
            CountDownLatch aHolds = new CountDownLatch(3);
            CountDownLatch release = new CountDownLatch(1);
            GroupConsumer<String> a = (GroupConsumer<String>) group.consume(m -> {
                aHolds.countDown();
                release.await();
                return Outcome.success();
            }, OPTS.withConcurrency(3).withExecutor(aThreads));
            Thread producer = null;
            try {
                assertThat(aHolds.await(10, TimeUnit.SECONDS)).isTrue();
                a.renewalSuspended = true;
                // Fresh messages keep coming (each one a wake-up for B), faster than B handles them: a backlog.
                producer = new Thread(() -> {
                    for (int i = 0; producing.get(); i++) {
                        try {
                            p.produce("f" + i);
                            Thread.sleep(5);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                });
                producer.start();
                String aLive = "SELECT count(*) FROM \"" + db.schema() + "\".claim_lease_" + sid + " WHERE high <= ? AND expires_at > now()";
                long lastA = lastOfA;
                List<String> byB = new CopyOnWriteArrayList<>();
                // B handles one message at a time; its first holds on until A's leases have run out, so B then knows of
                // expired ranges while fresh messages are waiting and more keep arriving.
                try (Consumption b = other.stream("first", String.class).consumerGroup("g").consume(m -> {
                    byB.add(m.payload());
                    if (byB.size() == 1) {
                        await().atMost(Duration.ofSeconds(10)).until(() -> scalar(db, aLive, lastA) == 0);
                    } else if (m.payload().startsWith("f")) {
                        Thread.sleep(30);
                    }
                    return Outcome.success();
                }, OPTS.withConcurrency(1))) {
                    await().atMost(Duration.ofSeconds(30)).until(() -> byB.containsAll(List.of("a0", "a1", "a2")));
                    assertThat(b.stats().rangesReclaimed()).isEqualTo(3);
                }
                List<String> seen = List.copyOf(byB);
                int from = seen.indexOf("a0");
                // The three taken-over messages run one after another: no fresh message was claimed between them.
                assertThat(seen.subList(from, from + 3)).as("B's deliveries: %s", seen).containsExactly("a0", "a1", "a2");
                // And they came right after the two fresh messages B had claimed before A's leases ran out.
                assertThat(from).as("B's deliveries: %s", seen).isEqualTo(2);
            } finally {
                producing.set(false);
                if (producer != null) {
                    producer.join();
                }
                release.countDown();
                a.close();
                aThreads.shutdownNow();
            }
        }
    }
}
