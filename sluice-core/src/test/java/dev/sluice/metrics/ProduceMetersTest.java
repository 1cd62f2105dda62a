package dev.sluice.metrics;

import static dev.sluice.metrics.Meters.counter;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Outgoing;
import dev.sluice.ProduceOptions;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code sluice.produce.messages} counts each message a producer's own transaction committed once; repeats apart. */
@SluiceTest
class ProduceMetersTest {
    @Test
    void committedMessagesAndIdempotentRepeatsAreCountedApart(TestDatabase db) throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(false)
                .meterRegistry(registry).build()) {
            sluice.stream("m.produced").register();
            sluice.stream("m.other").register();
            try (Producer<String> p = sluice.stream("m.produced", String.class).producer();
                 Producer<String> other = sluice.stream("m.other", String.class).producer()) {
                for (int i = 0; i < 3; i++) {
                    p.produce("plain-" + i);                                              // 3 messages
                }
                assertThat(p.produce("keyed", ProduceOptions.idempotent("k1")).duplicate()).isFalse(); // 1 message
                assertThat(p.produce("keyed", ProduceOptions.idempotent("k1")).duplicate()).isTrue();  // 1 repeat
                List<Boolean> batch = p.produceBatch(List.of(Outgoing.of("b1"), Outgoing.of("b2"), Outgoing.of("b3"),
                        Outgoing.of("again", ProduceOptions.idempotent("k1")))).stream().map(r -> r.duplicate()).toList();
                assertThat(batch).containsExactly(false, false, false, true);                // 3 messages, 1 repeat
                p.produce(c -> "from-callback", ProduceOptions.NONE);                        // 1 message
                other.produce("elsewhere");
                // The caller's own transaction: the producer never sees whether it commits, so it is not counted.
                try (Connection c = db.connect()) {
                    c.setAutoCommit(false);
                    p.produceInTransaction(c, "outbox", ProduceOptions.NONE);
                    c.commit();
                }
            }
            assertThat(counter(registry, "sluice.produce.messages", "stream", "m.produced")).isEqualTo(8);
            assertThat(counter(registry, "sluice.produce.duplicates", "stream", "m.produced")).isEqualTo(2);
            assertThat(counter(registry, "sluice.produce.messages", "stream", "m.other")).isEqualTo(1);
            assertThat(counter(registry, "sluice.produce.duplicates", "stream", "m.other")).isZero();
            // One batch size per committed transaction of the producer's own: 3 singles, the new key, its repeat,
            // the batch of 4 and the callback's message; the caller's transaction is not one of them.
            io.micrometer.core.instrument.DistributionSummary batches = registry.get("sluice.produce.batch")
                    .tags("stream", "m.produced").summary();
            assertThat(batches.count()).isEqualTo(7);
            assertThat(batches.totalAmount()).isEqualTo(10);
            assertThat(batches.max()).isEqualTo(4);
        }
    }

    @Test
    void aRejectedMessageIsNotCounted(TestDatabase db) {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(false)
                .meterRegistry(registry).build()) {
            sluice.stream("m.rejected").register();
            try (Producer<String> p = sluice.stream("m.rejected", String.class).producer()) {
                p.produce("fine");
                org.assertj.core.api.Assertions.assertThatThrownBy(() -> p.produce(null))
                        .isInstanceOf(dev.sluice.SluiceException.class);
            }
            assertThat(counter(registry, "sluice.produce.messages", "stream", "m.rejected")).isEqualTo(1);
        }
    }
}
