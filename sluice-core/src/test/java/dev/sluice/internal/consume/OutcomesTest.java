package dev.sluice.internal.consume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.sluice.DeliveryLogMode;
import dev.sluice.Outcome;
import dev.sluice.RetryPolicy;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The outcome mapping is pure: no database. */
class OutcomesTest {
    /** 3 attempts, 1 s doubling up to 10 s, 20 % jitter; the "random" draw is fixed at 0.5. */
    private final Outcomes outcomes = new Outcomes(
            new RetryPolicy(3, Duration.ofSeconds(1), 2.0, Duration.ofSeconds(10), 0.2), () -> 0.5);

    @Test
    void successWritesNoRowAndLogsSuccess() {
        Outcomes.Decision d = outcomes.decide(7, "k", Outcome.success(), 1, 0);
        assertThat(d.success()).isTrue();
        assertThat(d.row()).isNull();
        assertThat(d.kind()).isEqualTo(Outcomes.Kind.SUCCEEDED);
        assertThat(d.event()).isEqualTo(DeliveryEvent.SUCCESS);
    }

    @Test
    void retryBeforeTheLastAttemptIsReadyWithJitteredBackoff() {
        Outcomes.Decision d = outcomes.decide(7, "k", new Outcome.Retry(null, new IllegalStateException("boom")), 2, 1);
        assertThat(d.kind()).isEqualTo(Outcomes.Kind.RETRIED);
        assertThat(d.event()).isEqualTo(DeliveryEvent.FAILED);
        assertThat(d.row().status()).isEqualTo(RowStatus.READY);
        assertThat(d.row().id()).isEqualTo(7);
        assertThat(d.row().messageKey()).isEqualTo("k");
        assertThat(d.row().attempts()).isEqualTo(2);
        assertThat(d.row().delays()).isEqualTo(1);
        // backoff(2) = 2 s, shortened by 0.2 × 0.5 = 10 %
        assertThat(d.row().afterSeconds()).isCloseTo(1.8, within(1e-9));
        assertThat(d.row().error()).contains("boom");
        assertThat(d.row().stack()).isNotNull();
    }

    @Test
    void retryWithAnExplicitWaitUsesItUnjittered() {
        Outcomes.Decision d = outcomes.decide(7, null, Outcome.retry(Duration.ofMillis(250)), 1, 0);
        assertThat(d.row().afterSeconds()).isCloseTo(0.25, within(1e-9));
        assertThat(d.row().error()).isEqualTo("retry requested");
        assertThat(d.row().stack()).isNull();
    }

    @Test
    void retryAtTheLastAttemptIsDead() {
        Outcomes.Decision d = outcomes.decide(7, "k", new Outcome.Retry(null, new RuntimeException("x")), 3, 0);
        assertThat(d.kind()).isEqualTo(Outcomes.Kind.DEAD);
        assertThat(d.event()).isEqualTo(DeliveryEvent.DEAD);
        assertThat(d.row().status()).isEqualTo(RowStatus.DEAD);
        assertThat(d.row().attempts()).isEqualTo(3);
        assertThat(d.row().afterSeconds()).isZero();
    }

    @Test
    void terminalIsDeadWithItsCleanedReason() {
        Outcomes.Decision d = outcomes.decide(7, "k", Outcome.terminal("bad\u0000input"), 1, 0);
        assertThat(d.kind()).isEqualTo(Outcomes.Kind.DEAD);
        assertThat(d.row().status()).isEqualTo(RowStatus.DEAD);
        assertThat(d.row().error()).doesNotContain("\u0000").contains("bad");
    }

    @Test
    void delayDoesNotCountAsAnAttempt() {
        Outcomes.Decision d = outcomes.decide(7, "k", Outcome.delay(Duration.ofSeconds(3)), 2, 4);
        assertThat(d.kind()).isEqualTo(Outcomes.Kind.DELAYED);
        assertThat(d.event()).isEqualTo(DeliveryEvent.DELAYED);
        assertThat(d.row().status()).isEqualTo(RowStatus.READY);
        assertThat(d.row().attempts()).isEqualTo(1);
        assertThat(d.row().delays()).isEqualTo(5);
        assertThat(d.row().afterSeconds()).isCloseTo(3.0, within(1e-9));
    }

    @Test
    void deferralsRecheckSoonThenBackOffToOneSecond() {
        assertThat(Outcomes.deferRecheckSeconds(0)).isCloseTo(0.2, within(1e-9));
        assertThat(Outcomes.deferRecheckSeconds(1)).isCloseTo(0.4, within(1e-9));
        assertThat(Outcomes.deferRecheckSeconds(10)).isEqualTo(1.0);
        RangeWork.OutcomeRow r = Outcomes.deferredInRange(9, "k", 2);
        assertThat(r.status()).isEqualTo(RowStatus.DEFERRED);
        assertThat(r.attempts()).isEqualTo(1);
        assertThat(r.afterSeconds()).isCloseTo(0.1, within(1e-9));
    }

    @Test
    void jitterShortensByAtMostItsFraction() {
        Outcomes none = new Outcomes(RetryPolicy.DEFAULT.withJitter(0.2), () -> 0.0);
        Outcomes most = new Outcomes(RetryPolicy.DEFAULT.withJitter(0.2), () -> 0.999999);
        assertThat(none.jittered(Duration.ofSeconds(10))).isEqualTo(Duration.ofSeconds(10));
        assertThat(most.jittered(Duration.ofSeconds(10))).isGreaterThan(Duration.ofSeconds(8));
    }

    @Test
    void eventsLoggedByMode() {
        assertThat(DeliveryEvent.SUCCESS.loggedUnder(DeliveryLogMode.ALL)).isTrue();
        assertThat(DeliveryEvent.SUCCESS.loggedUnder(DeliveryLogMode.FAILURES)).isFalse();
        assertThat(DeliveryEvent.DEFERRED.loggedUnder(DeliveryLogMode.FAILURES)).isFalse();
        assertThat(DeliveryEvent.FAILED.loggedUnder(DeliveryLogMode.FAILURES)).isTrue();
        assertThat(DeliveryEvent.DEAD.loggedUnder(DeliveryLogMode.FAILURES)).isTrue();
        assertThat(DeliveryEvent.DELAYED.loggedUnder(DeliveryLogMode.FAILURES)).isTrue();
        assertThat(DeliveryEvent.DEAD.loggedUnder(DeliveryLogMode.OFF)).isFalse();
    }
}
