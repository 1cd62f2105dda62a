package dev.sluice.maint;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Outgoing;
import dev.sluice.ProduceOptions;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.StreamConfig;
import dev.sluice.SweepResult;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.internal.maint.Janitor;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A sweep that fails on one stream reports it (cleaned, one line) and still sweeps the other streams and sweeps. */
@SluiceTest
class SweepFailureTest {

    @Test
    void oneBrokenStreamFailsItsSweepButNotTheOthers(TestDatabase db) {
        try (JanitorFixture fx = new JanitorFixture(db); Sluice sluice = fx.client()) {
            long broken = sluice.stream("broken").register(StreamConfig.defaults()).id();
            long fine = sluice.stream("fine").register(StreamConfig.defaults()).id();
            for (String s : List.of("broken", "fine")) {
                try (Producer<String> p = sluice.stream(s, String.class).producer()) {
                    p.produceBatch(List.of(Outgoing.of("a", ProduceOptions.idempotent("a")),
                            Outgoing.of("b", ProduceOptions.idempotent("b"))));
                }
            }
            db.execute("UPDATE " + fx.table("idempotency_key", fine) + " SET created_at = now() - interval '2 days'");
            db.execute("DROP TABLE " + fx.table("idempotency_key", broken)); // sabotage

            List<SweepResult> pass = fx.janitor().sweep();
            assertThat(pass).extracting(SweepResult::name).containsExactlyElementsOf(Janitor.SWEEPS);
            SweepResult keys = JanitorFixture.result(pass, Janitor.IDEMPOTENCY_KEYS);
            assertThat(keys.ok()).isFalse();
            assertThat(keys.error()).contains("'broken'").doesNotContain("\n").doesNotContain("'fine'");
            assertThat(keys.removed()).as("the other stream's expired keys still went").isEqualTo(2);
            assertThat(fx.scalar("SELECT count(*) FROM " + fx.table("idempotency_key", fine))).isZero();
            assertThat(pass).filteredOn(r -> !r.name().equals(Janitor.IDEMPOTENCY_KEYS))
                    .allSatisfy(r -> assertThat(r.ok()).as(r.toString()).isTrue());
        }
    }
}
