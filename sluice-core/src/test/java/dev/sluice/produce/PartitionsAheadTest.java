package dev.sluice.produce;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Outgoing;
import dev.sluice.ProduceOptions;
import dev.sluice.Produced;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.StreamConfig;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.testing.PgCatalog;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

@SluiceTest
class PartitionsAheadTest {

    @Test
    void producersCrossManyPartitionBoundariesWithoutFailing(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            long id = sluice.stream("tiny-partitions").register(StreamConfig.builder().partitionSize(10).build()).id();
            PgCatalog cat = new PgCatalog(db, db.schema());
            assertThat(cat.partitions("message_log_" + id)).hasSize(1 + 103); // the head's partition + 1024 ids ahead
            Producer<String> p = sluice.stream("tiny-partitions", String.class).producer();

            Set<Long> ids = new HashSet<>();
            List<CompletableFuture<Produced>> async = new ArrayList<>();
            for (int i = 0; i < 150; i++) {
                async.add(p.produceAsync("async-" + i, ProduceOptions.NONE));
            }
            async.forEach(f -> ids.add(f.join().id()));
            List<Outgoing<String>> batch = new ArrayList<>();
            for (int i = 0; i < 120; i++) {
                batch.add(Outgoing.of("batch-" + i, i % 3 == 0 ? ProduceOptions.idempotent("k" + i) : ProduceOptions.NONE));
            }
            p.produceBatch(batch).forEach(r -> ids.add(r.id()));
            try (Connection c = db.connect()) {
                c.setAutoCommit(false);
                for (int i = 0; i < 30; i++) {
                    ids.add(p.produceInTransaction(c, "tx-" + i, ProduceOptions.NONE).id());
                }
                c.commit();
            }
            assertThat(ids).hasSize(300);
            assertThat(new Rows(db).count(id)).isEqualTo(300);
            long maxId = ids.stream().mapToLong(Long::longValue).max().orElseThrow();
            assertThat(cat.partitions("message_log_" + id).size()).isGreaterThanOrEqualTo((int) (maxId / 10) + 1);
            // Partitions are contiguous from 0, with the bounds partition_size apart: no holes, no overlaps.
            // (One catalog read: the background keeper may add more partitions at any moment.)
            List<String> parts = cat.partitions("message_log_" + id);
            Set<String> expected = new HashSet<>();
            for (int k = 0; k < parts.size(); k++) {
                expected.add("message_log_" + id + "_" + k + " FOR VALUES FROM ('" + (k * 10) + "') TO ('" + ((k + 1) * 10) + "')");
            }
            assertThat(parts).containsExactlyInAnyOrderElementsOf(expected);
        }
    }
}
