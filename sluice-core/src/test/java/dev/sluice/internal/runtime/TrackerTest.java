package dev.sluice.internal.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class TrackerTest {

    @Test
    void aPartIsTrackedUntilItClosesItself() throws Exception {
        Tracker tracker = new Tracker();
        Tracker.Registration[] reg = new Tracker.Registration[1];
        AutoCloseable part = () -> reg[0].close();
        reg[0] = tracker.track("consumption of s/g", part);
        assertThat(tracker.size()).isOne();
        part.close();
        assertThat(tracker.size()).as("a finished part is not kept until the client closes").isZero();
        reg[0].close(); // idempotent
        assertThat(tracker.size()).isZero();
    }

    @Test
    void closeAllClosesNewestFirstAndGoesOnAfterAFailure() {
        Tracker tracker = new Tracker();
        List<String> closed = new ArrayList<>();
        tracker.track("first", () -> closed.add("first"));
        tracker.track("failing", () -> {
            closed.add("failing");
            throw new IllegalStateException("boom");
        });
        tracker.track("third", () -> closed.add("third"));
        tracker.closeAll();
        assertThat(closed).containsExactly("third", "failing", "first");
        assertThat(tracker.size()).isZero();
        assertThat(tracker.closed()).isTrue();
    }

    @Test
    void aPartStartedAfterCloseIsStoppedAndRefusedWithClientClosed() {
        Tracker tracker = new Tracker();
        tracker.closeAll();
        AtomicBoolean stopped = new AtomicBoolean();
        assertThatThrownBy(() -> tracker.track("queue worker of emails", () -> stopped.set(true)))
                .isInstanceOfSatisfying(SluiceException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.CLIENT_CLOSED);
                    assertThat(e.getMessage()).contains("queue worker of emails");
                });
        assertThat(stopped).as("the started part was stopped again").isTrue();
        assertThat(tracker.size()).isZero();
    }

    @Test
    void aPartIsDescribedByItsOwnTextOrItsClassName() {
        Tracker tracker = new Tracker();
        tracker.closeAll();
        AutoCloseable named = new AutoCloseable() {
            @Override
            public void close() {
            }

            @Override
            public String toString() {
                return "consumption of orders/billing";
            }
        };
        assertThatThrownBy(() -> tracker.track(named)).hasMessageContaining("the consumption of orders/billing was not");
        class Plain implements AutoCloseable {
            @Override
            public void close() {
            }
        }
        assertThatThrownBy(() -> tracker.track(new Plain())).hasMessageContaining("the Plain was not");
        tracker.untrack(null); // a no-op
    }
}
