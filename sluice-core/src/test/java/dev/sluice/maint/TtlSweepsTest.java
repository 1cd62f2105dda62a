package dev.sluice.maint;

import static dev.sluice.maint.JanitorFixture.removed;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.ConsumeOptions;
import dev.sluice.Consumption;
import dev.sluice.GroupConfig;
import dev.sluice.Outcome;
import dev.sluice.Outgoing;
import dev.sluice.ProduceOptions;
import dev.sluice.Produced;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.StreamConfig;
import dev.sluice.SweepResult;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.internal.maint.Janitor;
import dev.sluice.internal.maint.JanitorLimits;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The row sweeps: idempotency keys, empty compaction heads, the delivery log and dead letters. */
@SluiceTest
class TtlSweepsTest {
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

    @Test
    void expiredIdempotencyKeysGoInBoundedBatchesAndYoungOnesStay() {
        long id = sluice.stream("keys").register(StreamConfig.builder().idempotencyKeyTtl(Duration.ofHours(1)).build()).id();
        Producer<String> p = sluice.stream("keys", String.class).producer();
        List<Outgoing<String>> batch = new ArrayList<>();
        for (int i = 0; i < 2_520; i++) {
            batch.add(Outgoing.of("m" + i, ProduceOptions.idempotent("k" + i)));
        }
        p.produceBatch(batch);
        String keys = fx.table("idempotency_key", id);
        // 2,500 keys expired (two hours old, TTL one hour), 10 just within the TTL, 10 fresh.
        // (Ids follow the batch's order: message id n + 1 carries key "k<n>".)
        fx.db.execute("UPDATE " + keys + " SET created_at = now() - interval '2 hours' WHERE message_id <= 2500");
        fx.db.execute("UPDATE " + keys + " SET created_at = now() - interval '50 minutes' WHERE message_id BETWEEN 2501 AND 2510");

        // Batches of 1,000 and at most 2 rounds a pass: the first pass takes 2,000, the next the other 500.
        Janitor janitor = fx.janitor(new JanitorLimits(1_000, 2, Duration.ofMinutes(1), Duration.ofMillis(300)));
        List<SweepResult> first = janitor.sweep();
        assertThat(removed(first, Janitor.IDEMPOTENCY_KEYS)).isEqualTo(2_000);
        assertThat(fx.scalar("SELECT count(*) FROM " + keys)).isEqualTo(520);
        assertThat(removed(janitor.sweep(), Janitor.IDEMPOTENCY_KEYS)).isEqualTo(500);
        assertThat(fx.scalar("SELECT count(*) FROM " + keys)).isEqualTo(20);
        assertThat(fx.scalar("SELECT count(*) FROM " + keys + " WHERE created_at < now() - interval '1 hour'")).isZero();
        assertThat(removed(janitor.sweep(), Janitor.IDEMPOTENCY_KEYS)).isZero();

        // The keys within the TTL still deduplicate; the log keeps every message.
        assertThat(fx.scalar("SELECT min(message_id) FROM " + keys)).isEqualTo(2501);
        Produced again = p.produce("again", ProduceOptions.idempotent("k2505"));
        assertThat(again.duplicate()).isTrue();
        assertThat(again.id()).isEqualTo(2506);
        assertThat(fx.scalar("SELECT count(*) FROM " + fx.table("message_log", id))).isEqualTo(2_520);
        assertThat(first).extracting(SweepResult::name).containsExactlyElementsOf(Janitor.SWEEPS);
        assertThat(first).allSatisfy(r -> assertThat(r.ok()).as(r.toString()).isTrue());
    }

    @Test
    void emptyCompactionHeadsPastTheTtlGoButHeadsWithWinnersAndHeldOnesStay(TestDatabase db) throws Exception {
        long id = sluice.stream("heads").register(StreamConfig.builder().emptyCompactionHeadTtl(Duration.ofMinutes(30)).build()).id();
        Producer<String> p = sluice.stream("heads", String.class).producer();
        p.produce("winner", ProduceOptions.builder().messageKey("won").compaction(1L).build());
        String heads = fx.table("compaction_head", id);
        // Empty heads (no winner): two idle for an hour, one updated ten minutes ago; and the winner, also old.
        fx.db.execute("INSERT INTO " + heads + " (compaction_key, updated_at) VALUES"
                + " ('idle-1', now() - interval '1 hour'), ('idle-2', now() - interval '1 hour'),"
                + " ('recent', now() - interval '10 minutes'), ('busy', now() - interval '1 hour')");
        fx.db.execute("UPDATE " + heads + " SET updated_at = now() - interval '1 hour' WHERE compaction_key = 'won'");

        // A compacted produce is giving 'busy' its winner right now: it holds the row until it commits.
        try (Connection producer = db.connect()) {
            producer.setAutoCommit(false);
            p.produceInTransaction(producer, "late winner", ProduceOptions.builder().messageKey("busy").compaction(5L).build());

            List<SweepResult> pass = fx.janitor().sweep();
            assertThat(removed(pass, Janitor.COMPACTION_HEADS)).isEqualTo(2);
            producer.commit();
        }
        assertThat(fx.strings("SELECT compaction_key FROM " + heads + " ORDER BY 1")).containsExactly("busy", "recent", "won");
        assertThat(fx.scalar("SELECT count(*) FROM " + heads + " WHERE compaction_key = 'busy' AND message_id IS NOT NULL"))
                .isEqualTo(1);
        // Once the held row has a winner it is no longer empty: later passes keep it (and the young empty head).
        assertThat(removed(fx.janitor().sweep(), Janitor.COMPACTION_HEADS)).isZero();
        assertThat(fx.strings("SELECT compaction_key FROM " + heads + " ORDER BY 1")).containsExactly("busy", "recent", "won");
    }

    @Test
    void deliveryLogAndDeadLettersPastTheirRetentionGoPerGroup() {
        long id = sluice.stream("failures").register(StreamConfig.builder().deliveryLogRetention(Duration.ofDays(2)).build()).id();
        Producer<String> p = sluice.stream("failures", String.class).producer();
        for (int i = 0; i < 20; i++) {
            p.produce("m" + i);
        }
        // 'short' keeps dead letters one hour, 'long' the default 14 days; every message fails for good in both.
        sluice.stream("failures", String.class).consumerGroup("short")
                .register(GroupConfig.builder().deadLetterRetention(Duration.ofHours(1)).build());
        sluice.stream("failures", String.class).consumerGroup("long").register();
        // 'retrying' leaves a retry due in an hour for every message: not a dead letter, never swept.
        sluice.stream("failures", String.class).consumerGroup("retrying").register();
        long head = 20;
        try (Consumption a = sluice.stream("failures", String.class).consumerGroup("short")
                .consume(m -> Outcome.terminal("bad " + m.payload()), ConsumeOptions.defaults());
             Consumption b = sluice.stream("failures", String.class).consumerGroup("long")
                     .consume(m -> Outcome.terminal("bad " + m.payload()), ConsumeOptions.defaults());
             Consumption c = sluice.stream("failures", String.class).consumerGroup("retrying")
                     .consume(m -> Outcome.retry(Duration.ofHours(1)), ConsumeOptions.defaults())) {
            await().atMost(Duration.ofSeconds(30)).until(() -> sluice.stream("failures").consumerGroups().stream()
                    .allMatch(g -> g.committed() == head && g.dead() + g.ready() == 20));
        }
        String queue = fx.table("exception_queue", id);
        String events = fx.table("delivery_log", id);
        long shortId = sluice.stream("failures").consumerGroup("short").get().orElseThrow().id();
        long longId = sluice.stream("failures").consumerGroup("long").get().orElseThrow().id();
        long retryingId = sluice.stream("failures").consumerGroup("retrying").get().orElseThrow().id();
        assertThat(fx.scalar("SELECT count(*) FROM " + events)).isEqualTo(60); // dead, dead, failed per message

        // Age: every dead letter of 'short' went dead 2 h ago; half of 'long' 15 days ago, half 13 days ago; the
        // retrying rows are as old as anything. Delivery events: 30 three days old, 30 one day old.
        fx.db.execute("UPDATE " + queue + " SET dead_at = now() - interval '2 hours' WHERE consumer_group_id = " + shortId);
        fx.db.execute("UPDATE " + queue + " SET dead_at = now() - CASE WHEN message_id % 2 = 0 THEN interval '15 days'"
                + " ELSE interval '13 days' END WHERE consumer_group_id = " + longId);
        fx.db.execute("UPDATE " + queue + " SET created_at = now() - interval '30 days', updated_at = now() - interval '30 days'"
                + " WHERE consumer_group_id = " + retryingId);
        fx.db.execute("UPDATE " + events + " SET attempted_at = now() - CASE WHEN id % 2 = 0 THEN interval '3 days'"
                + " ELSE interval '1 day' END");

        Janitor janitor = fx.janitor(new JanitorLimits(7, 100, Duration.ofMinutes(1), Duration.ofMillis(300)));
        List<SweepResult> pass = janitor.sweep();
        assertThat(removed(pass, Janitor.DEAD_LETTERS)).isEqualTo(20 + 10);
        assertThat(removed(pass, Janitor.DELIVERY_LOG)).isEqualTo(30);
        assertThat(fx.scalar("SELECT count(*) FROM " + queue + " WHERE consumer_group_id = " + shortId)).isZero();
        assertThat(fx.strings("SELECT DISTINCT (message_id % 2)::text FROM " + queue + " WHERE consumer_group_id = " + longId))
                .containsExactly("1");
        assertThat(fx.scalar("SELECT count(*) FROM " + queue + " WHERE consumer_group_id = " + longId)).isEqualTo(10);
        assertThat(fx.scalar("SELECT count(*) FROM " + queue + " WHERE consumer_group_id = " + retryingId + " AND status = 'ready'"))
                .isEqualTo(20);
        assertThat(fx.scalar("SELECT count(*) FROM " + events + " WHERE attempted_at < now() - interval '2 days'")).isZero();
        assertThat(fx.scalar("SELECT count(*) FROM " + events)).isEqualTo(30);
        // The admin view agrees: the kept dead letters are still listed, the swept ones are gone.
        assertThat(sluice.stream("failures").consumerGroup("long").admin().deadLetters(null, 100).items()).hasSize(10);
        assertThat(sluice.stream("failures").consumerGroup("short").admin().deadLetters(null, 100).items()).isEmpty();
        assertThat(Set.copyOf(janitor.sweep())).allSatisfy(r -> assertThat(r.removed()).as(r.name()).isZero());
    }
}
