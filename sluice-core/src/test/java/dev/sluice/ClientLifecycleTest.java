package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.time.Duration;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** One lifecycle for every running part of a client: tracked while running, let go when closed, refused after close. */
@SluiceTest
class ClientLifecycleTest {

    private static long threadsNamed(String prefix) {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.isAlive() && t.getName().startsWith(prefix)).count();
    }

    @Test
    void aClosedConsumptionIsNoLongerHeldByItsClient(TestDatabase db) {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            sluice.stream("life").register();
            sluice.stream("life", String.class).consumerGroup("g").register();
            int before = sluice.tracked();
            Consumption c = sluice.stream("life", String.class).consumerGroup("g").consume(m -> Outcome.success());
            assertThat(sluice.tracked()).isEqualTo(before + 1);
            c.close();
            assertThat(c.running()).isFalse();
            assertThat(sluice.tracked()).as("a finished consumption is let go at once").isEqualTo(before);
            Producer<String> p = sluice.stream("life", String.class).producer();
            assertThat(sluice.tracked()).isEqualTo(before + 1);
            p.close();
            assertThat(sluice.tracked()).isEqualTo(before);
        }
    }

    @Test
    void startingAConsumptionOnAClosedClientIsRefusedWithClientClosedAndLeavesNoThread(TestDatabase db) {
        Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build();
        sluice.stream("shut").register();
        ConsumerGroup<String> group = sluice.stream("shut", String.class).consumerGroup("late");
        group.register();
        sluice.close();
        assertThatThrownBy(() -> group.consume(m -> Outcome.success()))
                .isInstanceOfSatisfying(SluiceException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.CLIENT_CLOSED);
                    assertThat(e.getMessage()).contains("consumption of shut/late");
                });
        // Nothing was started for the refused consumption: no runtime thread, no session thread of this client.
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> threadsNamed("sluice-runtime-" + db.schema() + "-") == 0
                && threadsNamed("sluice-handler-" + db.schema() + "-") == 0 && threadsNamed("sluice-session-" + db.schema()) == 0);
        assertThatThrownBy(() -> sluice.stream("shut", String.class).producer())
                .isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CLIENT_CLOSED));
        assertThatThrownBy(() -> sluice.queue("jobs", String.class).work(job -> { }))
                .isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CLIENT_CLOSED));
        assertThat(sluice.tracked()).isZero();
    }
}
