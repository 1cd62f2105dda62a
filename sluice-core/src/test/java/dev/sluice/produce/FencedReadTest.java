package dev.sluice.produce;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.ProduceOptions;
import dev.sluice.Produced;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.StoredMessage;
import dev.sluice.Stream;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The fence's worst case (docs/consume.md, "the fence"): producer A takes its transaction id, B inserts id 1 and
 * stays open, A inserts id 2 and commits. A reader must not pass id 1 until B ends.
 */
@SluiceTest
class FencedReadTest {

    @Test
    void aReaderNeverPassesAnIdWhoseProducerMightStillCommit(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            sluice.stream("fence").register();
            Producer<String> p = sluice.stream("fence", String.class).producer();
            Stream<byte[]> stream = sluice.stream("fence");
            for (boolean bCommits : new boolean[] {true, false}) {
                long start = stream.read(0, 10_000, Duration.ofSeconds(5)).stream().mapToLong(StoredMessage::id).max().orElse(0);
                try (Connection a = db.connect(); Connection b = db.connect()) {
                    a.setAutoCommit(false);
                    b.setAutoCommit(false);
                    try (Statement s = a.createStatement()) {
                        s.execute("SELECT pg_current_xact_id()"); // A takes its xid first
                    }
                    Produced one = p.produceInTransaction(b, "from B", ProduceOptions.NONE);
                    Produced two = p.produceInTransaction(a, "from A", ProduceOptions.NONE);
                    assertThat(two.id()).isGreaterThan(one.id());
                    a.commit();

                    // Id 2 is committed and visible, id 1 is not: nothing may be read yet.
                    assertThat(stream.read(start, 100, Duration.ofMillis(300))).isEmpty();

                    if (bCommits) {
                        b.commit();
                    } else {
                        b.rollback();
                    }
                }
                List<StoredMessage> read = stream.read(start, 100, Duration.ofSeconds(5));
                List<String> payloads = read.stream().map(m -> new String(m.payload(), StandardCharsets.UTF_8)).toList();
                if (bCommits) {
                    assertThat(payloads).containsExactly("from B", "from A");
                } else {
                    assertThat(payloads).containsExactly("from A"); // the gap is skipped, nothing lost
                }
            }
        }
    }

    @Test
    void readsContinueFromTheLastIdAndReturnNothingWhenCaughtUp(TestDatabase db) {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            sluice.stream("paging").register();
            Producer<String> p = sluice.stream("paging", String.class).producer();
            for (int i = 0; i < 25; i++) {
                p.produce("m" + i, ProduceOptions.key("k" + (i % 3)));
            }
            Stream<byte[]> stream = sluice.stream("paging");
            List<StoredMessage> first = stream.read(0, 10, Duration.ofSeconds(5));
            List<StoredMessage> rest = stream.read(first.get(9).id(), 100, Duration.ofSeconds(5));
            assertThat(first).hasSize(10);
            assertThat(rest).hasSize(15);
            assertThat(rest.get(0).id()).isGreaterThan(first.get(9).id());
            assertThat(rest.get(14).messageKey()).isEqualTo("k0");
            assertThat(stream.read(rest.get(14).id(), 100, Duration.ofSeconds(5))).isEmpty();
        }
    }
}
