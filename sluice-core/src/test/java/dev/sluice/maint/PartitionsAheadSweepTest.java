package dev.sluice.maint;

import static dev.sluice.maint.JanitorFixture.removed;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Sluice;
import dev.sluice.StreamConfig;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.internal.maint.Janitor;
import java.util.List;
import org.junit.jupiter.api.Test;

/** partitions_ahead keeps every log's partitions ahead of its head, with DDL only where a head outran them. */
@SluiceTest
class PartitionsAheadSweepTest {

    @Test
    void createsPartitionsAheadOfAHeadThatOutranThemAndNothingElse(TestDatabase db) {
        try (JanitorFixture fx = new JanitorFixture(db); Sluice sluice = fx.client()) {
            long id = sluice.stream("jumped").register(StreamConfig.builder().partitionSize(100).build()).id();
            long calm = sluice.stream("calm").register(StreamConfig.builder().partitionSize(100).build()).id();
            // Registration made partitions 0..11 (1,024 ids ahead of the head); another process drew up to id 2,000.
            assertThat(fx.partitions(id)).hasSize(12);
            db.execute("SELECT setval('" + fx.q + ".message_log_" + id + "_id_seq', 2000)");

            Janitor janitor = fx.janitor();
            assertThat(removed(janitor.sweep(), Janitor.PARTITIONS_AHEAD)).as("partitions 12..31").isEqualTo(20);
            List<String> parts = fx.partitions(id);
            assertThat(parts).hasSize(32);
            for (int k = 0; k < parts.size(); k++) {
                assertThat(parts.get(k)).isEqualTo("message_log_" + id + "_" + k);
            }
            assertThat(fx.partitions(calm)).hasSize(12);

            // Nothing moved: no DDL, and no statement per stream either.
            int before = fx.statements.get();
            assertThat(removed(janitor.sweep(), Janitor.PARTITIONS_AHEAD)).isZero();
            int idle = fx.statements.get() - before;
            // A fresh janitor reads the partitions of every log in one catalog statement and finds them sufficient.
            Janitor fresh = fx.janitor();
            before = fx.statements.get();
            List<dev.sluice.SweepResult> pass = fresh.sweep();
            assertThat(removed(pass, Janitor.PARTITIONS_AHEAD)).isZero();
            assertThat(idle).isLessThan(fx.statements.get() - before);
            assertThat(fx.partitions(id)).hasSize(32);
        }
    }
}
