package dev.sluice.internal.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The shared poll loop, without a database: scheduling, wake-ups, overlap, errors and close. */
class PollLoopTest {
    private static final long HOUR = TimeUnit.HOURS.toNanos(1);

    private static long threadsNamed(String prefix) {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith(prefix)).count();
    }

    @Test
    void aThousandIdleLoopsShareTheSchedulersThreads() {
        try (ClientRuntime rt = new ClientRuntime("thousand", 2, 8)) {
            AtomicInteger polls = new AtomicInteger();
            List<PollLoop> loops = new ArrayList<>();
            for (int i = 0; i < 1000; i++) {
                PollLoop l = rt.loop("loop " + i, () -> {
                    polls.incrementAndGet();
                    return HOUR; // idle: wait long
                }, e -> 1000);
                l.start();
                loops.add(l);
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> polls.get() == 1000);
            assertThat(threadsNamed("sluice-runtime-thousand")).isLessThanOrEqualTo(2);
            assertThat(threadsNamed("sluice-handler-thousand")).isZero();
            loops.get(17).wake();
            await().atMost(Duration.ofSeconds(5)).until(() -> polls.get() == 1001);
            loops.forEach(PollLoop::close);
        }
    }

    @Test
    void aWakeDuringTheWaitPollsAtOnceAndADuringARunIsNotLost() throws Exception {
        try (ClientRuntime rt = new ClientRuntime("wake", 2, 1)) {
            AtomicInteger polls = new AtomicInteger();
            CountDownLatch inSecond = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            PollLoop loop = rt.loop("wake", () -> {
                int n = polls.incrementAndGet();
                if (n == 2) {
                    inSecond.countDown();
                    release.await(); // a run in progress
                }
                return HOUR;
            }, e -> 1000);
            loop.start();
            await().atMost(Duration.ofSeconds(5)).until(() -> polls.get() == 1);
            loop.wake(); // during the hour's wait
            assertThat(inSecond.await(5, TimeUnit.SECONDS)).isTrue();
            loop.wake(); // during run 2: run 3 must follow at once, not after the hour
            release.countDown();
            await().atMost(Duration.ofSeconds(5)).until(() -> polls.get() == 3);
            loop.close();
        }
    }

    @Test
    void runsNeverOverlapUnderManyWakes() throws Exception {
        try (ClientRuntime rt = new ClientRuntime("overlap", 4, 1)) {
            AtomicInteger inside = new AtomicInteger();
            AtomicBoolean overlapped = new AtomicBoolean();
            AtomicInteger polls = new AtomicInteger();
            PollLoop loop = rt.loop("overlap", () -> {
                if (inside.incrementAndGet() > 1) {
                    overlapped.set(true);
                }
                Thread.sleep(1);
                inside.decrementAndGet();
                polls.incrementAndGet();
                return TimeUnit.MILLISECONDS.toNanos(5);
            }, e -> 1000);
            loop.start();
            for (int i = 0; i < 2000; i++) {
                loop.wake();
                if (i % 100 == 0) {
                    Thread.sleep(1);
                }
            }
            await().atMost(Duration.ofSeconds(5)).until(() -> polls.get() > 20);
            loop.close();
            assertThat(overlapped).isFalse();
        }
    }

    @Test
    void aFailingPollBacksOffAndRecovers() {
        try (ClientRuntime rt = new ClientRuntime("errors", 1, 1)) {
            AtomicInteger polls = new AtomicInteger();
            List<Long> at = new ArrayList<>();
            PollLoop loop = rt.loop("errors", () -> {
                synchronized (at) {
                    at.add(System.nanoTime());
                }
                if (polls.incrementAndGet() <= 3) {
                    throw new IllegalStateException("database away");
                }
                return HOUR;
            }, e -> 400);
            loop.start();
            await().atMost(Duration.ofSeconds(5)).until(() -> polls.get() == 4);
            synchronized (at) {
                // backoffs 100, 200, 400 ms (capped by the failure's maximum)
                assertThat(TimeUnit.NANOSECONDS.toMillis(at.get(1) - at.get(0))).isGreaterThanOrEqualTo(95);
                assertThat(TimeUnit.NANOSECONDS.toMillis(at.get(2) - at.get(1))).isGreaterThanOrEqualTo(195);
                assertThat(TimeUnit.NANOSECONDS.toMillis(at.get(3) - at.get(2))).isBetween(395L, 3000L);
            }
            loop.close();
        }
    }

    @Test
    void closeWaitsForTheRunInProgressAndNothingRunsAfterIt() throws Exception {
        try (ClientRuntime rt = new ClientRuntime("close", 2, 1)) {
            AtomicInteger polls = new AtomicInteger();
            CountDownLatch inRun = new CountDownLatch(1);
            AtomicBoolean finished = new AtomicBoolean();
            PollLoop loop = rt.loop("close", () -> {
                polls.incrementAndGet();
                inRun.countDown();
                Thread.sleep(300);
                finished.set(true);
                return 0; // would poll again at once
            }, e -> 1000);
            loop.start();
            assertThat(inRun.await(5, TimeUnit.SECONDS)).isTrue();
            loop.close();
            assertThat(finished).as("close returned only after the run ended").isTrue();
            int after = polls.get();
            Thread.sleep(200);
            assertThat(polls.get()).isEqualTo(after);
            assertThat(loop.running()).isFalse();
            loop.wake(); // ignored
            loop.start(); // ignored
            Thread.sleep(50);
            assertThat(polls.get()).isEqualTo(after);
        }
    }

    @Test
    void aPollMayCloseItsOwnLoop() {
        try (ClientRuntime rt = new ClientRuntime("self", 1, 1)) {
            AtomicInteger polls = new AtomicInteger();
            PollLoop[] self = new PollLoop[1];
            self[0] = rt.loop("self", () -> {
                polls.incrementAndGet();
                self[0].close(); // must not wait for itself
                return 0;
            }, e -> 1000);
            self[0].start();
            await().atMost(Duration.ofSeconds(5)).until(() -> polls.get() == 1 && !self[0].running());
        }
    }
}
