package dev.sluice.consume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.ConsumeOptions;
import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.GroupConfig;
import dev.sluice.Outcome;
import dev.sluice.PartitionInfo;
import dev.sluice.ProduceOptions;
import dev.sluice.Produced;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.StreamConfig;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The existing group features on a partitioned group: the snapshot fence holds every bucket below an id whose producer
 * might still commit (a late commit is never skipped, in its bucket or any other), compaction skips superseded
 * messages, and the janitor's retention reads the lowest bucket position as the group's committed.
 */
@SluiceTest
class PartitionFenceTest {
    static final ConsumeOptions OPTS = ConsumeOptions.defaults().withPollInterval(Duration.ofMillis(30)).withBatchSize(20);

    static Sluice client(TestDatabase db) {
        return Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).fleetLease(Duration.ofMillis(1_500))
                .maintenance(false).build();
    }

    @Test
    void noBucketMovesPastAnIdWhoseProducerMightStillCommit(TestDatabase db) throws Exception {
        try (Sluice sluice = client(db)) {
            ConsumerGroup<String> group = PartitionedGroupTest.group(sluice, "part.fence", "g", GroupConfig.builder().partitions(3).build());
            Producer<String> p = sluice.stream("part.fence", String.class).producer();
            List<String> seen = new CopyOnWriteArrayList<>();
            try (Consumption c = group.consume(m -> {
                seen.add(m.payload());
                return Outcome.success();
            }, OPTS)) {
                await().atMost(Duration.ofSeconds(10)).until(() -> group.partitions().stream().allMatch(
                        b -> b.ownedAt(java.time.Instant.now())));
                for (boolean bCommits : new boolean[] {true, false}) {
                    seen.clear();
                    try (Connection a = db.connect(); Connection b = db.connect()) {
                        a.setAutoCommit(false);
                        b.setAutoCommit(false);
                        try (Statement s = a.createStatement()) {
                            s.execute("SELECT pg_current_xact_id()");
                        }
                        Produced one = p.produceInTransaction(b, "B", ProduceOptions.key("late"));
                        Produced two = p.produceInTransaction(a, "A", ProduceOptions.key("early"));
                        a.commit();
                        for (int i = 0; i < 20; i++) {
                            p.produce("C" + i, ProduceOptions.key("k" + i)); // later commits in every bucket
                        }
                        Thread.sleep(1_000); // the member polls (and is woken by the notifications) meanwhile
                        assertThat(seen).as("nothing may be delivered past B's id while B is open").isEmpty();
                        assertThat(group.partitions()).extracting(PartitionInfo::position)
                                .allSatisfy(pos -> assertThat(pos).isLessThan(one.id()));
                        assertThat(two.id()).isGreaterThan(one.id());
                        if (bCommits) {
                            b.commit();
                        } else {
                            b.rollback();
                        }
                    }
                    int expected = bCommits ? 22 : 21;
                    await().atMost(Duration.ofSeconds(20)).until(() -> seen.size() == expected);
                    assertThat(seen.contains("B")).isEqualTo(bCommits);
                }
            }
            p.close();
        }
    }

    @Test
    void compactionSkipsSupersededMessagesAndRetentionReadsTheLowestBucket(TestDatabase db) throws Exception {
        try (Sluice sluice = client(db)) {
            sluice.stream("part.compact", String.class).register(StreamConfig.defaults());
            ConsumerGroup<String> group = PartitionedGroupTest.group(sluice, "part.compact", "g", GroupConfig.builder().partitions(2).build());
            try (Producer<String> p = sluice.stream("part.compact", String.class).producer()) {
                for (int i = 1; i <= 3; i++) {
                    p.produce("v" + i, ProduceOptions.builder().messageKey("same").compaction(i).build());
                }
            }
            List<String> seen = new CopyOnWriteArrayList<>();
            CountDownLatch hold = new CountDownLatch(1);
            try (Consumption c = group.consume(m -> {
                seen.add(m.payload());
                return Outcome.success();
            }, OPTS)) {
                await().atMost(Duration.ofSeconds(20)).until(() -> group.get().orElseThrow().committed() == 3);
                assertThat(seen).containsExactly("v3");
                assertThat(c.stats().skippedSuperseded()).isEqualTo(2);
            }
            // A message of a key whose handler holds: its bucket stays behind, and so does the group's committed.
            try (Producer<String> p = sluice.stream("part.compact", String.class).producer();
                 Consumption c = group.consume(m -> {
                     if (m.payload().equals("slow")) {
                         hold.await(20, TimeUnit.SECONDS);
                     }
                     return Outcome.success();
                 }, OPTS)) {
                long slow = p.produce("slow", ProduceOptions.key("slow-key")).id();
                long after = 0;
                for (int i = 0; i < 30; i++) {
                    after = p.produce("x" + i, ProduceOptions.key("other" + i)).id();
                }
                long last = after;
                await().atMost(Duration.ofSeconds(20)).until(() -> group.partitions().stream()
                        .filter(b -> b.position() >= last).count() == 1);
                assertThat(group.get().orElseThrow().committed()).isLessThan(slow);
                hold.countDown();
                await().atMost(Duration.ofSeconds(20)).until(() -> group.get().orElseThrow().committed() == last);
            }
        }
    }
}
