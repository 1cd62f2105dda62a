package dev.sluice.produce;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Outgoing;
import dev.sluice.ProduceOptions;
import dev.sluice.Produced;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

@SluiceTest
class IdempotencyTest {
    static Sluice sluice;
    static Rows rows;

    @BeforeAll
    static void setUp(TestDatabase db) {
        sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build();
        rows = new Rows(db);
    }

    @AfterAll
    static void tearDown() {
        sluice.close();
    }

    @Test
    void aDuplicateWritesNothingAndReturnsTheOriginalId() {
        long id = sluice.stream("dups").register().id();
        Producer<String> p = sluice.stream("dups", String.class).producer();
        Produced first = p.produce("one", ProduceOptions.idempotent("order-1"));
        Produced other = p.produce("other", ProduceOptions.idempotent("order-2"));
        Produced again = p.produce("one, resent", ProduceOptions.idempotent("order-1"));

        assertThat(first.duplicate()).isFalse();
        assertThat(other.duplicate()).isFalse();
        assertThat(again).isEqualTo(new Produced(first.id(), true));
        assertThat(rows.count(id)).isEqualTo(2);
    }

    @Test
    void keysWorkAcrossBatchesWithinABatchAndThroughTheBatcher() throws Exception {
        long id = sluice.stream("batch-keys").register().id();
        Producer<String> p = sluice.stream("batch-keys", String.class).producer();
        List<Outgoing<String>> batch = List.of(Outgoing.of("a", ProduceOptions.idempotent("a")),
                Outgoing.of("plain"), Outgoing.of("b", ProduceOptions.idempotent("b")),
                Outgoing.of("a again", ProduceOptions.idempotent("a")));
        List<Produced> first = p.produceBatch(batch);
        assertThat(first.get(3)).isEqualTo(new Produced(first.get(0).id(), true));
        assertThat(first.subList(0, 3)).noneMatch(Produced::duplicate);

        List<Produced> resent = p.produceBatch(batch);
        assertThat(resent.get(0)).isEqualTo(new Produced(first.get(0).id(), true));
        assertThat(resent.get(1).duplicate()).isFalse(); // no key: a new message
        assertThat(resent.get(2)).isEqualTo(new Produced(first.get(2).id(), true));

        // Many concurrent calls with the same key through the batcher: one message, one id for all.
        List<CompletableFuture<Produced>> futures = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            futures.add(p.produceAsync("c" + i, ProduceOptions.idempotent("c")));
        }
        List<Produced> results = futures.stream().map(CompletableFuture::join).toList();
        assertThat(results).extracting(Produced::id).containsOnly(results.get(0).id());
        assertThat(results).filteredOn(r -> !r.duplicate()).hasSize(1);
        assertThat(rows.count(id)).isEqualTo(3 + 1 + 1);
    }

    @Test
    void anOpenTransactionHoldingTheKeyDecidesTheRaceCommitOrRollback(TestDatabase db) throws Exception {
        long id = sluice.stream("race").register().id();
        Sluice other = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Producer<String> a = sluice.stream("race", String.class).producer();
            Producer<String> b = other.stream("race", String.class).producer();

            // A holds the key in an open transaction; B's produce waits for it; A commits → B is a duplicate of A.
            try (Connection c = db.connect()) {
                c.setAutoCommit(false);
                Produced fromA = a.produceInTransaction(c, "from A", ProduceOptions.idempotent("k-commit"));
                Future<Produced> fromB = pool.submit(() -> b.produce("from B", ProduceOptions.idempotent("k-commit")));
                awaitBlockedOnLock(db);
                assertThat(fromB.isDone()).isFalse();
                c.commit();
                assertThat(fromB.get(30, TimeUnit.SECONDS)).isEqualTo(new Produced(fromA.id(), true));
            }
            // A rolls back → B writes its own message.
            try (Connection c = db.connect()) {
                c.setAutoCommit(false);
                Produced fromA = a.produceInTransaction(c, "from A", ProduceOptions.idempotent("k-rollback"));
                Future<Produced> fromB = pool.submit(() -> b.produce("from B", ProduceOptions.idempotent("k-rollback")));
                awaitBlockedOnLock(db);
                c.rollback();
                Produced won = fromB.get(30, TimeUnit.SECONDS);
                assertThat(won.duplicate()).isFalse();
                assertThat(won.id()).isNotEqualTo(fromA.id());
            }
            assertThat(rows.strings("SELECT convert_from(payload, 'UTF8') FROM \"" + db.schema() + "\".message_log_" + id
                    + " ORDER BY id")).containsExactly("from A", "from B");
        } finally {
            pool.shutdownNow();
            other.close();
        }
    }

    static void awaitBlockedOnLock(TestDatabase db) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            if (new Rows(db).scalar("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'") > 0) {
                return;
            }
            Thread.sleep(10);
        }
        throw new AssertionError("no session started waiting for a lock");
    }

    @Test
    void twoClientsRacingTheSameKeysAgreeOnOneMessagePerKey(TestDatabase db) throws Exception {
        long id = sluice.stream("race-many").register().id();
        int clients = 4;
        int keys = 200;
        CyclicBarrier start = new CyclicBarrier(clients);
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        List<Sluice> opened = new ArrayList<>();
        try {
            List<Future<List<Produced>>> futures = new ArrayList<>();
            for (int c = 0; c < clients; c++) {
                Sluice client = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build();
                opened.add(client);
                Producer<String> p = client.stream("race-many", String.class).producer();
                int seed = c;
                futures.add(pool.submit(() -> {
                    start.await(10, TimeUnit.SECONDS);
                    List<CompletableFuture<Produced>> mine = new ArrayList<>();
                    for (int k = 0; k < keys; k++) {
                        int key = (k * 7 + seed * 13) % keys; // each client walks the keys in its own order
                        mine.add(p.produceAsync("v" + key, ProduceOptions.idempotent("key-" + key)));
                    }
                    List<Produced> out = new ArrayList<>(java.util.Collections.nCopies(keys, null));
                    for (int k = 0; k < keys; k++) {
                        out.set((k * 7 + seed * 13) % keys, mine.get(k).join());
                    }
                    return out;
                }));
            }
            List<List<Produced>> all = new ArrayList<>();
            for (Future<List<Produced>> f : futures) {
                all.add(f.get(120, TimeUnit.SECONDS));
            }
            for (int k = 0; k < keys; k++) {
                int key = k;
                List<Produced> forKey = all.stream().map(l -> l.get(key)).toList();
                assertThat(forKey).extracting(Produced::id).as("key %d", k).containsOnly(forKey.get(0).id());
                assertThat(forKey).filteredOn(r -> !r.duplicate()).as("key %d", k).hasSize(1);
            }
            assertThat(rows.count(id)).isEqualTo(keys);
        } finally {
            pool.shutdownNow();
            opened.forEach(Sluice::close);
        }
    }

    @Test
    void anExpiredKeyNoLongerDeduplicates(TestDatabase db) {
        long id = sluice.stream("expiry").register().id();
        Producer<String> p = sluice.stream("expiry", String.class).producer();
        Produced first = p.produce("first", ProduceOptions.idempotent("k"));
        db.execute("UPDATE \"" + db.schema() + "\".idempotency_key_" + id + " SET created_at = now() - interval '25 hours'");
        Produced second = p.produce("second", ProduceOptions.idempotent("k"));
        assertThat(second.duplicate()).isFalse();
        assertThat(second.id()).isGreaterThan(first.id());
        assertThat(p.produce("third", ProduceOptions.idempotent("k"))).isEqualTo(new Produced(second.id(), true));
        assertThat(rows.count(id)).isEqualTo(2);
    }
}
