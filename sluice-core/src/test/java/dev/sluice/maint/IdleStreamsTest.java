package dev.sluice.maint;

import static dev.sluice.maint.JanitorFixture.removed;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.GroupConfig;
import dev.sluice.ProduceOptions;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.StreamConfig;
import dev.sluice.StreamInfo;
import dev.sluice.SweepResult;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.internal.maint.Janitor;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Idle streams cost the janitor nothing per stream: a pass over 20 idle streams runs as many statements as over 8. */
@SluiceTest
class IdleStreamsTest {
    static Sluice sluice;
    static JanitorFixture fx;

    @BeforeAll
    static void setUp(TestDatabase db) {
        fx = new JanitorFixture(db);
        sluice = fx.client();
    }

    @AfterAll
    static void tearDown() {
        sluice.close();
        fx.close();
    }

    /** Registers streams {@code from..to-1}: every other one with retention, a group on every third, a message on some. */
    private static void streams(int from, int to) {
        for (int i = from; i < to; i++) {
            String name = "idle-" + i;
            sluice.stream(name).register(StreamConfig.builder().retention(i % 2 == 0 ? Duration.ofDays(7) : null).build());
            if (i % 3 == 0) {
                sluice.stream(name).consumerGroup("g").register(GroupConfig.defaults());
            }
            if (i % 4 == 0) {
                try (Producer<String> p = sluice.stream(name, String.class).producer()) {
                    p.produce("m", ProduceOptions.idempotent("k"));
                }
            }
        }
    }

    /** Statements of the janitor's second pass (the first handles every stream once). */
    private static int secondPass(Janitor janitor) {
        List<SweepResult> first = janitor.sweep();
        assertThat(first).allSatisfy(r -> assertThat(r.ok()).as(r.toString()).isTrue());
        int before = fx.statements.get();
        List<SweepResult> second = janitor.sweep();
        assertThat(second).allSatisfy(r -> assertThat(r.removed()).as(r.toString()).isZero());
        return fx.statements.get() - before;
    }

    @Test
    void idleStreamsAreSkippedSoAPassCostsTheSameWhateverTheirNumber() {
        streams(0, 8);
        int eight = secondPass(fx.janitor());

        streams(8, 20);
        Janitor janitor = fx.janitor();
        int before = fx.statements.get();
        janitor.sweep();
        int firstOfTwenty = fx.statements.get() - before;
        before = fx.statements.get();
        List<SweepResult> again = janitor.sweep();
        int twenty = fx.statements.get() - before;
        assertThat(again).allSatisfy(r -> assertThat(r.removed()).as(r.toString()).isZero());

        assertThat(firstOfTwenty).as("a fresh janitor looks at every stream once").isGreaterThan(3 * 20);
        assertThat(twenty).as("then idle streams cost no statement of their own").isEqualTo(eight);
        assertThat(twenty).as("the stream list, the heads, the groups").isLessThanOrEqualTo(8);
        Instant now = Instant.now();
        for (StreamInfo s : sluice.streams()) {
            long head = fx.scalar("SELECT coalesce(pg_sequence_last_value(?::regclass), 0)", fx.q + ".message_log_" + s.id() + "_id_seq");
            assertThat(janitor.skips(s, head, now)).as(s.name()).hasValueSatisfying(k -> assertThat(k.all()).isTrue());
        }

        // A message into one stream: its head moved, but the partitions still cover it and no key can be due yet.
        try (Producer<String> p = sluice.stream("idle-7", String.class).producer()) {
            p.produce("m");
        }
        before = fx.statements.get();
        assertThat(removed(janitor.sweep(), Janitor.PARTITIONS_AHEAD)).isZero();
        assertThat(fx.statements.get() - before).isEqualTo(twenty);
        // Once a row can be due, the stream is looked at again: a key made old now is swept at the next pass.
        long id = sluice.stream("idle-8").get().orElseThrow().id();
        fx.db.execute("UPDATE " + fx.table("idempotency_key", id) + " SET created_at = now() - interval '2 days'");
        assertThat(removed(janitor.sweep(), Janitor.IDEMPOTENCY_KEYS)).as("the janitor still waits for the due time it knows")
                .isZero();
        assertThat(removed(fx.janitor().sweep(), Janitor.IDEMPOTENCY_KEYS)).as("a fresh janitor looks again").isEqualTo(1);
    }
}
