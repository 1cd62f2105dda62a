package dev.sluice.consume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.sluice.ConsumeOptions;
import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.DeadLetter;
import dev.sluice.ErrorCode;
import dev.sluice.GroupConfig;
import dev.sluice.GroupInfo;
import dev.sluice.Outcome;
import dev.sluice.Page;
import dev.sluice.Producer;
import dev.sluice.Reader;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.StartPosition;
import dev.sluice.StoredMessage;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

@SluiceTest
class LifecycleTest {
    static Sluice sluice;
    static final ConsumeOptions OPTS = ConsumeOptions.defaults().withPollInterval(Duration.ofMillis(20))
            .withIdleCheck(Duration.ofMillis(200));

    @BeforeAll
    static void setUp(TestDatabase db) {
        sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build();
    }

    @AfterAll
    static void tearDown() {
        sluice.close();
    }

    static void assertCode(ErrorCode code, ThrowingCallable call) {
        assertThatThrownBy(call).isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(code));
    }

    @Test
    void aCleanStopMidBatchReleasesUnfinishedRangesForAnotherInstanceAtOnce() throws Exception {
        sluice.stream("handover").register();
        ConsumerGroup<String> group = sluice.stream("handover", String.class).consumerGroup("g");
        group.register();
        Producer<String> p = sluice.stream("handover", String.class).producer();
        for (int i = 0; i < 20; i++) {
            p.produce("h" + i);
        }
        CountDownLatch started = new CountDownLatch(1);
        Set<String> byA = ConcurrentHashMap.newKeySet();
        ConsumeOptions longLease = OPTS.withLeaseTimeout(Duration.ofMinutes(5)).withBatchSize(20).withConcurrency(2)
                .withShutdownTimeout(Duration.ofMillis(300));
        Consumption a = group.consume(m -> {
            started.countDown();
            if (m.payload().equals("h0") || m.payload().equals("h1")) {
                byA.add(m.payload());
                return Outcome.success();
            }
            Thread.sleep(60_000); // still running when A stops
            return Outcome.success();
        }, longLease);
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        await().atMost(Duration.ofSeconds(10)).until(() -> byA.size() == 2);
        a.close();
        Set<String> byB = ConcurrentHashMap.newKeySet();
        Instant start = Instant.now();
        try (Consumption b = group.consume(m -> {
            byB.add(m.payload());
            return Outcome.success();
        }, longLease)) {
            // Well before the 5-minute lease would expire.
            await().atMost(Duration.ofSeconds(20)).until(() -> byB.size() >= 18);
            assertThat(Duration.between(start, Instant.now())).isLessThan(Duration.ofSeconds(20));
            assertThat(b.stats().rangesReclaimed()).isEqualTo(1);
        }
        assertThat(byB).doesNotContain("h0", "h1");
    }

    @Test
    void startPositionsAndRewind(TestDatabase db) throws Exception {
        sluice.stream("starts").register();
        Producer<String> p = sluice.stream("starts", String.class).producer();
        long first = p.produce("a").id();
        p.produce("b");
        Thread.sleep(50);
        Instant middle = Instant.now();
        Thread.sleep(50);
        long third = p.produce("c").id();
        ConsumerGroup<String> fromHead = sluice.stream("starts", String.class).consumerGroup("head");
        ConsumerGroup<String> atId = sluice.stream("starts", String.class).consumerGroup("at-id");
        ConsumerGroup<String> atTime = sluice.stream("starts", String.class).consumerGroup("at-time");
        GroupInfo head = fromHead.register(GroupConfig.builder().start(StartPosition.head()).build());
        assertThat(head.committed()).isEqualTo(third);
        assertThat(atId.register(GroupConfig.builder().start(StartPosition.atId(first + 1)).build()).committed()).isEqualTo(first);
        assertThat(atTime.register(GroupConfig.builder().start(StartPosition.atTime(middle)).build()).committed()).isEqualTo(third - 1);
        // start is read only at creation: a re-declaration does not move the cursor.
        assertThat(fromHead.register(GroupConfig.builder().start(StartPosition.beginning()).build()).committed()).isEqualTo(third);
        p.produce("d");
        List<String> seen = new CopyOnWriteArrayList<>();
        try (Consumption c = atId.consume(m -> {
            seen.add(m.payload());
            return Outcome.success();
        }, OPTS)) {
            await().atMost(Duration.ofSeconds(20)).until(() -> seen.size() == 3);
            assertThat(seen).containsExactlyInAnyOrder("b", "c", "d");
            // Rewind is refused while the group has a live consumer, unless forced.
            assertCode(ErrorCode.INSTANCES_LIVE, () -> atId.admin().rewindToId(first, false));
        }
        assertThat(atId.admin().rewindToId(first, false).committed()).isEqualTo(first - 1);
        seen.clear();
        try (Consumption c = atId.consume(m -> {
            seen.add(m.payload());
            return Outcome.success();
        }, OPTS)) {
            await().atMost(Duration.ofSeconds(20)).until(() -> seen.size() == 4);
            assertThat(seen).containsExactlyInAnyOrder("a", "b", "c", "d");
        }
        assertThat(atId.admin().rewindToTime(middle, false).committed()).isEqualTo(third - 1);
    }

    @Test
    void deadLettersPageByKeysetAndRedriveOrPurgeNamedIds() {
        sluice.stream("dead").register();
        ConsumerGroup<String> group = sluice.stream("dead", String.class).consumerGroup("g");
        group.register();
        Producer<String> p = sluice.stream("dead", String.class).producer();
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            ids.add(p.produce("d" + i).id());
        }
        try (Consumption c = group.consume(m -> Outcome.terminal("no"), OPTS)) {
            await().atMost(Duration.ofSeconds(20)).until(() -> group.get().orElseThrow().dead() == 7);
        }
        Page<DeadLetter> first = group.admin().deadLetters(null, 3);
        Page<DeadLetter> second = group.admin().deadLetters(first.next(), 3);
        Page<DeadLetter> third = group.admin().deadLetters(second.next(), 3);
        assertThat(first.items()).extracting(DeadLetter::messageId).containsExactlyElementsOf(ids.subList(0, 3));
        assertThat(second.items()).extracting(DeadLetter::messageId).containsExactlyElementsOf(ids.subList(3, 6));
        assertThat(third.items()).extracting(DeadLetter::messageId).containsExactly(ids.get(6));
        assertThat(third.next()).isNull();
        assertCode(ErrorCode.INVALID_CONFIG, () -> group.admin().deadLetters("garbage!", 3));

        assertCode(ErrorCode.MESSAGE_NOT_FOUND, () -> group.admin().redrive(List.of(ids.get(0), 999_999L)));
        assertThat(group.get().orElseThrow().dead()).as("a refused redrive changes nothing").isEqualTo(7);
        assertThat(group.admin().purge(List.of(ids.get(0), ids.get(1)))).isEqualTo(2);
        assertThat(group.admin().redrive(List.of(ids.get(2)))).isEqualTo(1);
        GroupInfo info = group.get().orElseThrow();
        assertThat(info.dead()).isEqualTo(4);
        assertThat(info.ready()).isEqualTo(1);
        assertThat(group.admin().purgeAll()).isEqualTo(4);
        assertCode(ErrorCode.MESSAGE_NOT_FOUND, () -> group.admin().purge(List.of(ids.get(3))));
    }

    @Test
    void badInputIsCoded() {
        sluice.stream("bad").register();
        assertCode(ErrorCode.GROUP_NOT_FOUND, () -> sluice.stream("bad", String.class).consumerGroup("missing")
                .consume(m -> Outcome.success()));
        assertCode(ErrorCode.GROUP_NOT_FOUND, () -> sluice.stream("bad").consumerGroup("missing").admin().redriveAll());
        assertCode(ErrorCode.INVALID_NAME, () -> sluice.stream("bad").consumerGroup("Bad Group").register());
        assertCode(ErrorCode.STREAM_NOT_FOUND, () -> sluice.stream("nope").consumerGroup("g").register());
        assertCode(ErrorCode.INVALID_BINDING, () -> sluice.stream("bad").consumerGroup("g")
                .register(GroupConfig.builder().bindings("white space").build()));
        assertCode(ErrorCode.INVALID_CONFIG, () -> ConsumeOptions.defaults().withBatchSize(0));
        assertCode(ErrorCode.INVALID_CONFIG, () -> ConsumeOptions.defaults().withLeaseTimeout(Duration.ofMillis(10)));
        assertCode(ErrorCode.INVALID_CONFIG, () -> StartPosition.atId(0));
        assertCode(ErrorCode.INVALID_CONFIG, () -> dev.sluice.RetryPolicy.DEFAULT.withMaxAttempts(0));
        assertCode(ErrorCode.INVALID_OPTIONS, () -> Outcome.delay(Duration.ofSeconds(-1)));
        assertThat(sluice.stream("bad").consumerGroup("missing").get()).isEmpty();
    }

    @Test
    void groupDeclarationsAreStoredSparseAndLogged(TestDatabase db) {
        sluice.stream("declared").register();
        ConsumerGroup<String> group = sluice.stream("declared", String.class).consumerGroup("g");
        GroupInfo created = group.register(GroupConfig.builder().bindings("a.*").maxRangeReclaims(5).build());
        group.register(GroupConfig.builder().bindings("a.*").maxRangeReclaims(5).build());
        GroupInfo updated = group.register();
        assertThat(created.config().maxRangeReclaims()).isEqualTo(5);
        assertThat(updated.config()).isEqualTo(GroupConfig.defaults());
        String q = "\"" + db.schema() + "\"";
        assertThat(ConsumeFixture.strings(db, "SELECT config::text FROM " + q + ".consumer_group_config WHERE id = ?", created.id()))
                .containsExactly("{}");
        assertThat(ConsumeFixture.strings(db, "SELECT l.snapshot->>'action' FROM " + q + ".worker_config_log l JOIN " + q
                + ".worker_config w ON w.id = l.worker_config_id WHERE w.consumer_group_id = ? ORDER BY l.id", created.id()))
                .containsExactly("created", "unchanged", "updated");
    }

    @Test
    void readersReadUpToTheFenceAndSaveOffsetsMonotonically() {
        sluice.stream("reader").register();
        Producer<String> p = sluice.stream("reader", String.class).producer();
        for (int i = 0; i < 5; i++) {
            p.produce("r" + i);
        }
        Reader reader = sluice.stream("reader").reader("audit");
        assertThat(reader.offset()).isZero();
        List<StoredMessage> page = reader.read(reader.offset(), 3);
        assertThat(page).hasSize(3);
        long next = page.get(2).id() + 1;
        assertThat(reader.saveOffset(next)).isEqualTo(next);
        assertThat(reader.saveOffset(1)).as("never moves back").isEqualTo(next);
        assertThat(reader.read(reader.offset(), 10)).hasSize(2);
        assertCode(ErrorCode.INVALID_CONFIG, () -> reader.saveOffset(-1));
        assertCode(ErrorCode.INVALID_NAME, () -> sluice.stream("reader").reader("Bad!").offset());
    }

    @Test
    void wakeUpsDeliverWithoutWaitingForThePoll() {
        sluice.stream("wake").register();
        ConsumerGroup<String> group = sluice.stream("wake", String.class).consumerGroup("g");
        group.register();
        Producer<String> p = sluice.stream("wake", String.class).producer();
        List<Instant> handled = new CopyOnWriteArrayList<>();
        // A one-minute fallback poll and idle check: only a notification can deliver within seconds.
        ConsumeOptions lazy = ConsumeOptions.defaults().withPollInterval(Duration.ofMinutes(1)).withIdleCheck(Duration.ofMinutes(1));
        try (Consumption c = group.consume(m -> {
            handled.add(Instant.now());
            return Outcome.success();
        }, lazy)) {
            await().pollDelay(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5)).until(() -> true);
            for (int i = 0; i < 3; i++) {
                Instant sent = Instant.now();
                p.produce("w" + i);
                int expected = i + 1;
                await().atMost(Duration.ofSeconds(5)).until(() -> handled.size() == expected);
                assertThat(Duration.between(sent, handled.get(i))).isLessThan(Duration.ofSeconds(5));
            }
        }
    }
}
