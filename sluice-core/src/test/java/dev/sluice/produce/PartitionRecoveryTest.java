package dev.sluice.produce;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.ErrorCode;
import dev.sluice.PartitionExtension;
import dev.sluice.ProduceOptions;
import dev.sluice.Produced;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.StreamConfig;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.testing.PgCatalog;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** A producer whose id sequence ran past the partitions (another process, a burst) recovers. */
@SluiceTest
class PartitionRecoveryTest {
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

    /** Moves the stream's id sequence this many ids past its highest partition, as another process would. */
    static long runPastPartitions(TestDatabase db, long streamId, long by) {
        PgCatalog cat = new PgCatalog(db, db.schema());
        long covered = (long) cat.partitions("message_log_" + streamId).size() * 10;
        long target = covered + by;
        rows.scalar("SELECT setval(?::regclass, ?)", "\"" + db.schema() + "\".message_log_" + streamId + "_id_seq", target);
        return target;
    }

    @Test
    void theOutboxFormExtendsPartitionsSoTheCallersRetrySucceeds(TestDatabase db) throws Exception {
        long id = sluice.stream("outbox-past").register(StreamConfig.builder().partitionSize(10).build()).id();
        Producer<String> p = sluice.stream("outbox-past", String.class).producer();
        assertThat(p.produce("first").id()).isEqualTo(1); // resolves the producer's partition keeper
        long head = runPastPartitions(db, id, 50);

        String orders = "\"" + db.schema() + "\".outbox_orders";
        db.execute("CREATE TABLE " + orders + " (id text PRIMARY KEY)");
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                s.execute("INSERT INTO " + orders + " VALUES ('o-1')");
            }
            assertThatThrownBy(() -> p.produceInTransaction(c, "lost", ProduceOptions.NONE))
                    .isInstanceOfSatisfying(SluiceException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.PARTITION_UNAVAILABLE);
                        assertThat(e.retryable()).isTrue();
                    });
            // The failed insert aborted the caller's transaction: a commit keeps nothing of it.
            try {
                c.commit();
            } catch (SQLException expected) {
                // pgjdbc may report the silent rollback; either way nothing was kept
            }
            c.rollback();
            assertThat(rows.scalar("SELECT count(*) FROM " + orders)).isZero();
            Produced retried = p.produceInTransaction(c, "retried", ProduceOptions.NONE);
            c.commit();
            assertThat(retried.id()).isGreaterThan(head);
        }
        assertThat(rows.count(id)).isEqualTo(2);
    }

    @Test
    void registeringAgainExtendsThePartitionsPastTheHead(TestDatabase db) {
        long id = sluice.stream("re-register").register(StreamConfig.builder().partitionSize(10).build()).id();
        long head = runPastPartitions(db, id, 500);
        PgCatalog cat = new PgCatalog(db, db.schema());
        int before = cat.partitions("message_log_" + id).size();
        sluice.stream("re-register").register(StreamConfig.builder().partitionSize(10).build());
        // The head's partition and 1,024 ids (103 partitions of 10) beyond it, no holes below.
        assertThat(cat.partitions("message_log_" + id)).hasSize((int) (head / 10) + 1 + 103);
        assertThat(cat.partitions("message_log_" + id).size()).isGreaterThan(before);
    }

    @Test
    void migrateUpExtendsThePartitionsOfEveryStream(TestDatabase db) {
        long id = sluice.stream("migrated").register(StreamConfig.builder().partitionSize(10).build()).id();
        long head = runPastPartitions(db, id, 500);
        PgCatalog cat = new PgCatalog(db, db.schema());
        sluice.migrations().up();
        assertThat(cat.partitions("message_log_" + id)).hasSize((int) (head / 10) + 1 + 103);
        assertThat(sluice.stream("migrated", String.class).producer().produce("after").id()).isEqualTo(head + 1);
    }

    @Test
    void extendPartitionsCreatesThemAheadOfTheHeadAndReportsWhat(TestDatabase db) {
        long id = sluice.stream("extend").register(StreamConfig.builder().partitionSize(1000).build()).id();
        PgCatalog cat = new PgCatalog(db, db.schema());
        assertThat(cat.partitions("message_log_" + id)).hasSize(3); // 0, and 2 for the 1,024 ids ahead
        rows.scalar("SELECT setval(?::regclass, 4500)", "\"" + db.schema() + "\".message_log_" + id + "_id_seq");
        PartitionExtension e = sluice.stream("extend").extendPartitions(5);
        assertThat(e.stream()).isEqualTo("extend");
        assertThat(e.headId()).isEqualTo(4500);
        assertThat(e.created()).containsExactly("message_log_" + id + "_3", "message_log_" + id + "_4",
                "message_log_" + id + "_5", "message_log_" + id + "_6", "message_log_" + id + "_7",
                "message_log_" + id + "_8", "message_log_" + id + "_9");
        assertThat(e.coveredUpTo()).isEqualTo(10_000);
        assertThat(sluice.stream("extend").extendPartitions(5).created()).isEmpty();
        assertThat(sluice.stream("extend", String.class).producer().produce("next").id()).isEqualTo(4501);

        assertThatThrownBy(() -> sluice.stream("extend").extendPartitions(0)).isInstanceOfSatisfying(SluiceException.class,
                x -> assertThat(x.code()).isEqualTo(ErrorCode.INVALID_CONFIG));
        assertThatThrownBy(() -> sluice.stream("no-such").extendPartitions(1)).isInstanceOfSatisfying(SluiceException.class,
                x -> assertThat(x.code()).isEqualTo(ErrorCode.STREAM_NOT_FOUND));
    }
}
