package dev.sluice.consume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.ConsumeOptions;
import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.Outcome;
import dev.sluice.Producer;
import dev.sluice.ReadOptions;
import dev.sluice.Reader;
import dev.sluice.Sluice;
import dev.sluice.StoredMessage;
import dev.sluice.Stream;
import dev.sluice.StreamConfig;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Reads, readers and consumers stop a fetch at a byte budget (at least one message) and lose nothing. */
@SluiceTest
class ByteBudgetTest {
    static Sluice sluice;

    @BeforeAll
    static void setUp(TestDatabase db) {
        sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build();
    }

    @AfterAll
    static void tearDown() {
        sluice.close();
    }

    /** Produces payloads of the given sizes (each filled with its index) and returns their ids. */
    static List<Long> produce(String stream, int... sizes) {
        sluice.stream(stream).register(StreamConfig.builder().maxPayloadBytes(16 << 20).build());
        List<Long> ids = new ArrayList<>();
        try (Producer<byte[]> p = sluice.stream(stream).producer()) {
            for (int i = 0; i < sizes.length; i++) {
                byte[] payload = new byte[sizes[i]];
                Arrays.fill(payload, (byte) i);
                ids.add(p.produce(payload).id());
            }
        }
        return ids;
    }

    static long bytes(List<StoredMessage> batch) {
        return batch.stream().mapToLong(m -> m.payload().length).sum();
    }

    @Test
    void aReadStopsAtTheDefaultBudget() {
        // Three 7 MiB payloads: 21 MiB in all, over the default 16 MiB budget of one read.
        List<Long> ids = produce("big", 7 << 20, 7 << 20, 7 << 20);
        Stream<byte[]> stream = sluice.stream("big");
        List<StoredMessage> first = stream.read(0, 100, Duration.ofSeconds(5));
        assertThat(first).extracting(StoredMessage::id).containsExactly(ids.get(0), ids.get(1));
        assertThat(bytes(first)).isLessThanOrEqualTo(ReadOptions.DEFAULT_MAX_BYTES);
        List<StoredMessage> rest = stream.read(first.get(1).id(), 100, Duration.ofSeconds(5));
        assertThat(rest).extracting(StoredMessage::id).containsExactly(ids.get(2));
        assertThat(rest.get(0).payload()).hasSize(7 << 20).containsOnly((byte) 2);
    }

    @Test
    void aReaderReadsEverythingInBudgetedBatchesInOrder() {
        // 1000-byte payloads against a 2500-byte budget: two per read; the 6000-byte one comes alone.
        List<Long> ids = produce("reader", 1000, 1000, 1000, 6000, 1000, 1000, 1000, 1000, 1000);
        Reader reader = sluice.stream("reader").reader("r");
        ReadOptions options = ReadOptions.defaults().withMaxBytes(2500);
        List<Long> seen = new ArrayList<>();
        List<Integer> batchSizes = new ArrayList<>();
        long offset = 1;
        while (true) {
            List<StoredMessage> batch = reader.read(offset, 100, options);
            if (batch.isEmpty()) {
                break;
            }
            assertThat(batch.size() == 1 || bytes(batch) <= 2500).as("batch %s within the budget", batch.stream().map(StoredMessage::id).toList()).isTrue();
            batchSizes.add(batch.size());
            for (StoredMessage m : batch) {
                assertThat(m.payload()).containsOnly((byte) ids.indexOf(m.id()));
                seen.add(m.id());
            }
            offset = batch.get(batch.size() - 1).id() + 1;
        }
        assertThat(seen).containsExactlyElementsOf(ids);
        assertThat(batchSizes).containsExactly(2, 1, 1, 2, 2, 1);
        assertThat(reader.read(ids.get(0), 100, ReadOptions.defaults())).as("the default budget takes all")
                .hasSize(ids.size());
    }

    @Test
    void aConsumerClaimsBudgetedRangesAndDeliversEveryMessageOnceInOrder() {
        List<Long> ids = produce("consumed", 1000, 1000, 1000, 1000, 1000, 6000, 1000, 1000, 1000, 1000);
        ConsumerGroup<byte[]> group = sluice.stream("consumed").consumerGroup("g");
        group.register();
        List<Long> delivered = new CopyOnWriteArrayList<>();
        ConsumeOptions options = ConsumeOptions.defaults().withConcurrency(1).withMaxBytes(2500)
                .withPollInterval(Duration.ofMillis(20)).withIdleCheck(Duration.ofMillis(200));
        try (Consumption c = group.consume(m -> {
            assertThat(m.payload()).containsOnly((byte) ids.indexOf(m.id()));
            delivered.add(m.id());
            return Outcome.success();
        }, options)) {
            await().atMost(Duration.ofSeconds(30)).until(() -> delivered.size() >= ids.size() && c.stats().succeeded() == ids.size());
            // 1000+1000 | 1000+1000 | 1000 | 6000 alone | 1000+1000 | 1000+1000: six ranges, none over the budget.
            assertThat(c.stats().rangesClaimed()).isGreaterThanOrEqualTo(6);
            assertThat(c.stats().delivered()).isEqualTo(ids.size());
        }
        assertThat(delivered).containsExactlyElementsOf(ids);
        assertThat(LongStream.of(delivered.stream().mapToLong(Long::longValue).toArray()).distinct().count()).isEqualTo(ids.size());
    }
}
