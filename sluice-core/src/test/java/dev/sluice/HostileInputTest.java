package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Hostile input to the library: control characters in keys and header names are refused (values are
 * stored as given), run and expiry times are capped like delays, and every refused input is echoed cut.
 */
@SluiceTest
class HostileInputTest {
    /** What retitles a terminal (OSC 0) and clears it (CSI 2J). */
    static final String TITLE = "\u001b]0;owned\u0007";
    static final String CLEAR = "\u001b[2J";

    static Sluice sluice;
    static TestDatabase db;

    @BeforeAll
    static void setUp(TestDatabase database) {
        db = database;
        sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build();
        sluice.system().register();
    }

    @AfterAll
    static void tearDown() {
        sluice.close();
    }

    static SluiceException assertCode(ErrorCode code, ThrowingCallable call) {
        assertThatThrownBy(call).isInstanceOf(SluiceException.class);
        try {
            call.call();
        } catch (SluiceException e) {
            assertThat(e.code()).isEqualTo(code);
            return e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
        throw new AssertionError("not thrown");
    }

    long count(String sql) {
        try (Connection c = db.connect(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void controlCharactersInMessageKeysAndHeaderNamesAreRefusedAndNothingIsWritten() {
        long id = sluice.stream("hostile").register().id();
        Producer<byte[]> p = sluice.stream("hostile").producer();
        for (String bad : List.of(TITLE, CLEAR, "tab\there", "line\nbreak", "del\u007f", "c1\u009b2J", "bidi\u202etxt.exe")) {
            assertCode(ErrorCode.INVALID_KEY, () -> p.produce(new byte[1], ProduceOptions.key(bad)));
            assertCode(ErrorCode.INVALID_KEY, () -> p.produce(new byte[1], ProduceOptions.builder().routingKey(bad).build()));
            assertCode(ErrorCode.INVALID_KEY, () -> p.produce(new byte[1], ProduceOptions.idempotent(bad)));
            SluiceException e = assertCode(ErrorCode.INVALID_HEADERS,
                    () -> p.produce(new byte[1], ProduceOptions.builder().header(bad, "v").build()));
            assertThat(e.getMessage()).doesNotContain("\u001b").doesNotContain("\n").doesNotContain("\u202e");
        }
        assertThat(count("SELECT count(*) FROM \"" + db.schema() + "\".message_log_" + id)).isZero();
        // Header values may hold them (tools escape them on output); keys without them still pass.
        long written = p.produce(new byte[1], ProduceOptions.builder().messageKey("k-ü-1").routingKey("eu.created")
                .header("note", "line\nbreak " + CLEAR).build()).id();
        StoredMessage m = sluice.stream("hostile").read(written - 1, 1, Duration.ofSeconds(5)).get(0);
        assertThat(m.messageKey()).isEqualTo("k-ü-1");
        assertThat(m.headers()).isEqualTo(Map.of("note", "line\nbreak " + CLEAR));
    }

    @Test
    void controlCharactersInUniqueKeysAndJobHeaderNamesAreRefused() {
        Queue<String> q = sluice.queue("hostile-jobs", String.class);
        assertCode(ErrorCode.INVALID_KEY, () -> q.enqueue("x", EnqueueOptions.unique(TITLE)));
        assertCode(ErrorCode.INVALID_KEY, () -> q.enqueue("x", EnqueueOptions.unique("a\u0000b")));
        assertCode(ErrorCode.INVALID_HEADERS, () -> q.enqueue("x", EnqueueOptions.builder().header(CLEAR, "v").build()));
        assertThat(count("SELECT count(*) FROM \"" + db.schema() + "\".job WHERE queue = 'hostile-jobs'")).isZero();
        long ok = q.enqueue("x", EnqueueOptions.builder().uniqueKey("order-7").header("note", TITLE).build());
        assertThat(q.admin().jobs(JobState.PENDING, null, 10).items()).extracting(JobInfo::id).containsExactly(ok);
    }

    @Test
    void runAtAndExpiresAtAreCappedLikeTheDelay() {
        Queue<String> q = sluice.queue("far-future", String.class);
        Instant yearOneBillion = Instant.parse("+1000000000-01-01T00:00:00Z");
        Instant year200000 = Instant.parse("+200000-01-01T00:00:00Z");
        Instant elevenYears = Instant.now().plus(Duration.ofDays(3660));
        for (Instant t : List.of(yearOneBillion, year200000, elevenYears, Instant.MIN, Instant.parse("-0001-01-01T00:00:00Z"))) {
            assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> q.enqueue("x", EnqueueOptions.builder().runAt(t).build()));
            assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> q.enqueue("x", EnqueueOptions.builder().expiresAt(t).build()));
            assertCode(ErrorCode.INVALID_QUEUE_OPTIONS, () -> q.enqueueBatch(List.of(NewJob.of("x", EnqueueOptions.builder()
                    .runAt(t).build()))));
        }
        assertThat(count("SELECT count(*) FROM \"" + db.schema() + "\".job WHERE queue = 'far-future'")).isZero();
        Instant nineYears = Instant.now().plus(Duration.ofDays(3285));
        q.enqueue("x", EnqueueOptions.builder().runAt(nineYears).expiresAt(nineYears.plusSeconds(60)).build());
        q.enqueue("x", EnqueueOptions.builder().runAt(Instant.parse("2001-01-01T00:00:00Z")).build());
        assertThat(count("SELECT count(*) FROM \"" + db.schema() + "\".job WHERE queue = 'far-future'")).isEqualTo(2);
    }

    @Test
    void everyRefusedInputIsEchoedCutAndClean() {
        String huge = "x".repeat(10_000) + CLEAR;
        List<ThrowingCallable> refusals = List.of(
                () -> Sluice.builder().dataSource(db.dataSource()).schema(huge).build(),
                () -> Sluice.builder().dataSource(db.dataSource()).schema("bad\u001b[2Jschema").build(),
                () -> sluice.stream(huge).get(),
                () -> ConcurrencyPolicy.parse(huge),
                () -> DeliveryLogMode.parse(huge),
                () -> ScheduleSpec.builder("@every " + huge).toQueue("q").build(),
                () -> ScheduleSpec.builder(huge + " * * * *").toQueue("q").build(),
                () -> ScheduleSpec.builder("@every 5m").zone(huge).toQueue("q").build(),
                () -> sluice.queue("q").admin().jobs(JobState.PENDING, huge, 10),
                () -> sluice.stream("hostile").consumerGroup("g").admin().deadLetters(huge, 10),
                () -> BindingPattern.validate("y".repeat(200) + CLEAR + " x"));
        for (ThrowingCallable refusal : refusals) {
            assertThatThrownBy(refusal).isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.problem())
                    .hasSizeLessThan(400).doesNotContain("\u001b").doesNotContain("x".repeat(141)).doesNotContain("y".repeat(141)));
        }
    }
}
