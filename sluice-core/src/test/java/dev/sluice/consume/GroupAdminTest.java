package dev.sluice.consume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.ErrorCode;
import dev.sluice.GroupAdmin;
import dev.sluice.Outcome;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.LongStream;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** group.admin(): the same id-list rules as queue.admin() (QueueAdminTest), and the deprecated aliases. */
@SluiceTest
class GroupAdminTest {
    static Sluice sluice;

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
    void badIdListsAreCodedBeforeAnyRoundTrip() {
        // neither stream nor group is registered: bad input is rejected first, an empty list is 0
        GroupAdmin admin = sluice.stream("admin-bad").consumerGroup("g").admin();
        assertThat(admin.redrive(List.of())).isZero();
        assertThat(admin.purge(List.of())).isZero();
        assertCode(ErrorCode.INVALID_CONFIG, () -> admin.redrive(null));
        assertCode(ErrorCode.INVALID_CONFIG, () -> admin.purge(null));
        assertCode(ErrorCode.INVALID_CONFIG, () -> admin.purge(Arrays.asList(1L, null)));
        List<Long> tooMany = LongStream.rangeClosed(1, 10_001).boxed().toList();
        assertCode(ErrorCode.INVALID_CONFIG, () -> admin.redrive(tooMany));
        assertCode(ErrorCode.INVALID_CONFIG, () -> admin.purge(tooMany));
        assertCode(ErrorCode.INVALID_CONFIG, () -> admin.deadLetters(null, 0));
        assertCode(ErrorCode.INVALID_CONFIG, () -> admin.rewindToId(0, false));
        assertCode(ErrorCode.STREAM_NOT_FOUND, () -> admin.redrive(List.of(1L)));
    }

    @Test
    @SuppressWarnings("deprecation")
    void deprecatedAliasesStillWork() {
        sluice.stream("admin-alias").register();
        ConsumerGroup<String> group = sluice.stream("admin-alias", String.class).consumerGroup("g");
        group.register();
        Producer<String> p = sluice.stream("admin-alias", String.class).producer();
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            ids.add(p.produce("m" + i).id());
        }
        try (Consumption c = group.consume(m -> Outcome.terminal("no"), LifecycleTest.OPTS)) {
            await().atMost(Duration.ofSeconds(20)).until(() -> group.get().orElseThrow().dead() == 3);
        }
        assertThat(group.deadLetters(null, 10).items()).hasSize(3);
        assertCode(ErrorCode.MESSAGE_NOT_FOUND, () -> group.redrive(List.of(ids.get(0), 999_999L)));
        assertThat(group.purge(List.of(ids.get(0), ids.get(0)))).as("repeats count once").isEqualTo(1);
        assertThat(group.purgeAll()).isEqualTo(2);
        assertCode(ErrorCode.INVALID_CONFIG, () -> group.redrive(null));
    }
}
