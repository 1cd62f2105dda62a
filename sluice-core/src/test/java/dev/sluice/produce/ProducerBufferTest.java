package dev.sluice.produce;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.sluice.ErrorCode;
import dev.sluice.ProduceOptions;
import dev.sluice.Produced;
import dev.sluice.Producer;
import dev.sluice.ProducerConfig;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The producer's buffer is bounded in messages and bytes while the database does not take writes. */
@SluiceTest
class ProducerBufferTest {
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

    private static SluiceException failure(CompletableFuture<Produced> f) {
        assertThat(f).as("a full buffer fails produceAsync at once").isCompletedExceptionally();
        try {
            f.get();
            throw new AssertionError("expected a failure");
        } catch (ExecutionException e) {
            assertThat(e.getCause()).isInstanceOf(SluiceException.class);
            return (SluiceException) e.getCause();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aHeldDatabaseFillsTheBufferThenEverythingAcceptedIsWritten(TestDatabase db) throws Exception {
        long id = sluice.stream("held").register().id();
        ProducerConfig small = ProducerConfig.defaults().withMaxInFlight(1).withMaxBatchSize(10)
                .withMaxBufferedMessages(50).withBufferTimeout(Duration.ofMillis(500));
        Producer<String> byCount = sluice.stream("held", String.class).producer(small);
        Producer<String> byBytes = sluice.stream("held", String.class).producer(ProducerConfig.defaults()
                .withMaxBufferedBytes(5_000).withBufferTimeout(Duration.ZERO));
        byCount.produce("warm-up"); // resolves the stream (and its partitions) before the hold
        byBytes.produce("warm-up");
        String kib = "x".repeat(1024);

        List<CompletableFuture<Produced>> accepted = new ArrayList<>();
        try (Connection hold = db.connect()) {
            hold.setAutoCommit(false);
            try (Statement s = hold.createStatement()) {
                // INSERT needs ROW EXCLUSIVE on the log, which EXCLUSIVE blocks: no batch can commit.
                s.execute("LOCK TABLE \"" + db.schema() + "\".message_log_" + id + " IN EXCLUSIVE MODE");
            }
            for (int i = 0; i < 50; i++) {
                accepted.add(byCount.produceAsync("m" + i, ProduceOptions.NONE));
            }
            SluiceException full = failure(byCount.produceAsync("one too many", ProduceOptions.NONE));
            assertThat(full.code()).isEqualTo(ErrorCode.PRODUCER_BUFFER_FULL);
            assertThat(full.retryable()).isTrue();

            long start = System.nanoTime();
            assertThatThrownBy(() -> byCount.produce("waits for room"))
                    .isInstanceOfSatisfying(SluiceException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.PRODUCER_BUFFER_FULL));
            long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertThat(waitedMillis).as("produce waits the buffer timeout, then gives up")
                    .isGreaterThanOrEqualTo(500).isLessThan(10_000);

            // The byte bound: four 1 KiB messages (plus per-message overhead) fit in 5,000 bytes, a fifth does not.
            for (int i = 0; i < 4; i++) {
                CompletableFuture<Produced> f = byBytes.produceAsync(kib, ProduceOptions.NONE);
                assertThat(f).as("message %d fits", i).isNotCompletedExceptionally();
                accepted.add(f);
            }
            assertThat(failure(byBytes.produceAsync(kib, ProduceOptions.NONE)).code()).isEqualTo(ErrorCode.PRODUCER_BUFFER_FULL);
            assertThatThrownBy(() -> byBytes.produce(kib)).isInstanceOfSatisfying(SluiceException.class,
                    e -> assertThat(e.code()).isEqualTo(ErrorCode.PRODUCER_BUFFER_FULL));

            assertThat(accepted).noneMatch(CompletableFuture::isDone);
            hold.rollback();
        }
        for (CompletableFuture<Produced> f : accepted) {
            assertThat(f).succeedsWithin(Duration.ofSeconds(30));
        }
        assertThat(accepted).extracting(CompletableFuture::join).extracting(Produced::id).doesNotHaveDuplicates();
        assertThat(rows.count(id)).as("two warm-ups + every accepted message, nothing rejected").isEqualTo(2 + 54);
        // The buffer drained: both producers take messages again.
        assertThat(byCount.produce("after").id()).isPositive();
        assertThat(byBytes.produce(kib).id()).isPositive();
        assertThat(rows.count(id)).isEqualTo(2 + 54 + 2);
        byCount.close();
        byBytes.close();
    }

    /** Takes an EXCLUSIVE lock on the stream's log in its own transaction: no batch can commit until rollback. */
    private static Connection hold(TestDatabase db, long streamId) throws Exception {
        Connection hold = db.connect();
        hold.setAutoCommit(false);
        try (Statement s = hold.createStatement()) {
            s.execute("LOCK TABLE \"" + db.schema() + "\".message_log_" + streamId + " IN EXCLUSIVE MODE");
        }
        return hold;
    }

    @Test
    void aWaitingProduceGoesThroughOnceABatchFreesRoom(TestDatabase db) throws Exception {
        long id = sluice.stream("room").register().id();
        Producer<String> p = sluice.stream("room", String.class).producer(ProducerConfig.defaults().withMaxInFlight(1)
                .withMaxBufferedMessages(5).withBufferTimeout(Duration.ofSeconds(60)));
        p.produce("warm-up");
        List<CompletableFuture<Produced>> accepted = new ArrayList<>();
        CompletableFuture<Produced> waiting;
        Thread caller;
        try (Connection hold = hold(db, id)) {
            for (int i = 0; i < 5; i++) {
                accepted.add(p.produceAsync("m" + i, ProduceOptions.NONE));
            }
            assertThat(accepted).noneMatch(CompletableFuture::isCompletedExceptionally);
            waiting = new CompletableFuture<>();
            CompletableFuture<Produced> result = waiting;
            caller = new Thread(() -> {
                try {
                    result.complete(p.produce("waited"));
                } catch (RuntimeException e) {
                    result.completeExceptionally(e);
                }
            });
            caller.start();
            // The caller is parked waiting for room (not failed, not through).
            await().atMost(Duration.ofSeconds(30)).until(() -> caller.getState() == Thread.State.TIMED_WAITING);
            assertThat(waiting).isNotDone();
            hold.rollback();
        }
        assertThat(waiting).succeedsWithin(Duration.ofSeconds(30));
        accepted.forEach(f -> assertThat(f).succeedsWithin(Duration.ofSeconds(30)));
        assertThat(rows.count(id)).isEqualTo(1 + 5 + 1);
        p.close();
    }

    @Test
    void closingWakesAWaitingProduceWithProducerClosed(TestDatabase db) throws Exception {
        long id = sluice.stream("closing").register().id();
        Producer<String> p = sluice.stream("closing", String.class).producer(ProducerConfig.defaults().withMaxInFlight(1)
                .withMaxBufferedMessages(3).withBufferTimeout(Duration.ofSeconds(60)).withShutdownTimeout(Duration.ofMillis(200)));
        p.produce("warm-up");
        try (Connection hold = hold(db, id)) {
            for (int i = 0; i < 3; i++) {
                p.produceAsync("m" + i, ProduceOptions.NONE);
            }
            CompletableFuture<Produced> waiting = new CompletableFuture<>();
            Thread caller = new Thread(() -> {
                try {
                    waiting.complete(p.produce("waited"));
                } catch (RuntimeException e) {
                    waiting.completeExceptionally(e);
                }
            });
            caller.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> caller.getState() == Thread.State.TIMED_WAITING);
            p.close();
            assertThat(waiting).failsWithin(Duration.ofSeconds(30)).withThrowableOfType(ExecutionException.class)
                    .havingCause().isInstanceOfSatisfying(SluiceException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.PRODUCER_CLOSED));
            hold.rollback();
        }
    }

    @Test
    void bufferBoundsAreValidated() {
        assertThatThrownBy(() -> ProducerConfig.defaults().withMaxBufferedMessages(0))
                .isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_CONFIG));
        assertThatThrownBy(() -> ProducerConfig.defaults().withMaxBufferedBytes(0))
                .isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_CONFIG));
        assertThatThrownBy(() -> ProducerConfig.defaults().withBufferTimeout(Duration.ofMillis(-1)))
                .isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_CONFIG));
        assertThat(ProducerConfig.defaults().maxBufferedMessages()).isEqualTo(10_000);
        assertThat(ProducerConfig.defaults().maxBufferedBytes()).isEqualTo(64L << 20);
        assertThat(ProducerConfig.defaults().bufferTimeout()).isEqualTo(Duration.ofSeconds(10));
    }
}
