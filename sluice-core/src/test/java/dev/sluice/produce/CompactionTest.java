package dev.sluice.produce;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Outgoing;
import dev.sluice.ProduceOptions;
import dev.sluice.Produced;
import dev.sluice.Producer;
import dev.sluice.SchemaVersion;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

@SluiceTest
class CompactionTest {
    static Sluice sluice;
    static Rows rows;

    public record V1(String v) {
    }

    @SchemaVersion(2)
    public record V2(String v) {
    }

    @BeforeAll
    static void setUp(TestDatabase db) {
        sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build();
        rows = new Rows(db);
    }

    @AfterAll
    static void tearDown() {
        sluice.close();
    }

    static ProduceOptions compacted(String key, long rank) {
        return ProduceOptions.builder().messageKey(key).compaction(rank).build();
    }

    @Test
    void theWinnerIsTheHighestSchemaVersionThenRankThenId() {
        long id = sluice.stream("winner").register().id();
        Producer<V1> v1 = sluice.stream("winner", V1.class).producer();
        Producer<V2> v2 = sluice.stream("winner", V2.class).producer();

        Produced a = v1.produce(new V1("a"), compacted("k", 5));
        assertThat(rows.heads(id)).containsEntry("k", a.id() + "/1/5");
        Produced tie = v1.produce(new V1("tie"), compacted("k", 5));          // same version and rank: higher id wins
        assertThat(rows.heads(id)).containsEntry("k", tie.id() + "/1/5");
        v1.produce(new V1("lower rank"), compacted("k", 4));                  // lower rank never wins, even later
        assertThat(rows.heads(id)).containsEntry("k", tie.id() + "/1/5");
        Produced higher = v1.produce(new V1("higher rank"), compacted("k", 9));
        assertThat(rows.heads(id)).containsEntry("k", higher.id() + "/1/9");
        Produced newer = v2.produce(new V2("newer version, low rank"), compacted("k", -100));
        assertThat(rows.heads(id)).containsEntry("k", newer.id() + "/2/-100");  // version beats rank
        v1.produce(new V1("old version, huge rank"), compacted("k", Long.MAX_VALUE));
        assertThat(rows.heads(id)).containsEntry("k", newer.id() + "/2/-100");

        // Inside one batch the same rule picks one head per key.
        List<Produced> batch = v1.produceBatch(List.of(Outgoing.of(new V1("x1"), compacted("b", 1)),
                Outgoing.of(new V1("x2"), compacted("b", 3)), Outgoing.of(new V1("x3"), compacted("b", 3)),
                Outgoing.of(new V1("x4"), compacted("b", 2))));
        assertThat(rows.heads(id)).containsEntry("b", batch.get(2).id() + "/1/3");
        // Plain messages with a key do not touch heads.
        v1.produce(new V1("plain"), ProduceOptions.key("b"));
        assertThat(rows.heads(id)).containsEntry("b", batch.get(2).id() + "/1/3").hasSize(2);
        assertThat(rows.log(id).get(batch.get(0).id()).rank()).isEqualTo(1L);
    }

    @Test
    void concurrentCompactedBatchesOverOverlappingKeysFinishWithoutDeadlock() throws Exception {
        long id = sluice.stream("overlap").register().id();
        // A deadlock would be retried silently by the transaction runner, so count them in the server's stats.
        long deadlocksBefore = rows.scalar("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()");
        int writers = 6;
        int rounds = 15;
        int keys = 40;
        CyclicBarrier start = new CyclicBarrier(writers);
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        try {
            List<Future<Map<Long, long[]>>> futures = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                Producer<V1> p = sluice.stream("overlap", V1.class).producer();
                int seed = w;
                futures.add(pool.submit(() -> {
                    Random random = new Random(seed);
                    Map<Long, long[]> produced = new HashMap<>(); // id -> {key, rank}
                    start.await(10, TimeUnit.SECONDS);
                    for (int r = 0; r < rounds; r++) {
                        List<Integer> order = new ArrayList<>();
                        for (int k = 0; k < keys; k++) {
                            order.add(k);
                        }
                        Collections.shuffle(order, random); // every batch lists the keys in its own order
                        List<Outgoing<V1>> batch = new ArrayList<>();
                        List<long[]> meta = new ArrayList<>();
                        for (int k : order.subList(0, 25)) {
                            long rank = random.nextInt(5);
                            batch.add(Outgoing.of(new V1("w" + seed), compacted("key-" + k, rank)));
                            meta.add(new long[] {k, rank});
                        }
                        List<Produced> out = p.produceBatch(batch);
                        for (int i = 0; i < out.size(); i++) {
                            produced.put(out.get(i).id(), meta.get(i));
                        }
                    }
                    return produced;
                }));
            }
            Map<Long, long[]> all = new HashMap<>();
            for (Future<Map<Long, long[]>> f : futures) {
                all.putAll(f.get(120, TimeUnit.SECONDS));
            }
            assertThat(all).hasSize(writers * rounds * 25);
            // The head of every key is its highest (rank, id) among everything produced.
            Map<String, String> expected = new HashMap<>();
            Map<Long, long[]> best = new HashMap<>();
            all.forEach((msg, m) -> best.merge(m[0], new long[] {m[1], msg},
                    (x, y) -> (x[0] > y[0] || (x[0] == y[0] && x[1] > y[1])) ? x : y));
            best.forEach((k, b) -> expected.put("key-" + k, b[1] + "/1/" + b[0]));
            assertThat(rows.heads(id)).isEqualTo(expected);
            Thread.sleep(600); // statistics reach pg_stat_database with a short delay
            assertThat(rows.scalar("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()"))
                    .isEqualTo(deadlocksBefore);
        } finally {
            pool.shutdownNow();
        }
    }
}
