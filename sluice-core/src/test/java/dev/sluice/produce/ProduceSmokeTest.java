package dev.sluice.produce;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.*;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.util.List;
import org.junit.jupiter.api.Test;

@SluiceTest
class ProduceSmokeTest {
    @Test
    void producesPlainKeyedAndCompacted(TestDatabase db) {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            sluice.stream("smoke").register();
            Producer<String> p = sluice.stream("smoke", String.class).producer();
            Produced a = p.produce("hello");
            Produced b = p.produce("again", ProduceOptions.idempotent("k1"));
            Produced c = p.produce("dup", ProduceOptions.idempotent("k1"));
            Produced d = p.produce("compacted", ProduceOptions.builder().messageKey("m").compaction(3).build());
            List<Produced> batch = p.produceBatch(List.of(Outgoing.of("x"), Outgoing.of("y", ProduceOptions.idempotent("k1"))));
            assertThat(a.duplicate()).isFalse();
            assertThat(b.id()).isGreaterThan(a.id());
            assertThat(c).isEqualTo(new Produced(b.id(), true));
            assertThat(d.id()).isGreaterThan(b.id());
            assertThat(batch.get(1)).isEqualTo(new Produced(b.id(), true));
        }
    }
}
