package dev.sluice.internal.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The per-consumer bound on a shared executor, without a database. */
class BoundedExecutorTest {

    @Test
    void boundIsRespectedUnderContentionAndEveryTaskRuns() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(16);
        ExecutorService submitters = Executors.newFixedThreadPool(8);
        try {
            BoundedExecutor bounded = new BoundedExecutor(pool, 3);
            AtomicInteger running = new AtomicInteger();
            AtomicInteger maxSeen = new AtomicInteger();
            int tasks = 2000;
            CountDownLatch done = new CountDownLatch(tasks);
            for (int s = 0; s < 8; s++) {
                submitters.execute(() -> {
                    for (int i = 0; i < tasks / 8; i++) {
                        bounded.execute(() -> {
                            int now = running.incrementAndGet();
                            maxSeen.accumulateAndGet(now, Math::max);
                            Thread.onSpinWait();
                            running.decrementAndGet();
                            done.countDown();
                        });
                    }
                });
            }
            assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
            assertThat(maxSeen.get()).isBetween(1, 3);
            assertThat(bounded.queued()).isZero();
        } finally {
            submitters.shutdownNow();
            pool.shutdownNow();
        }
    }

    @Test
    void theBoundIsReachedAndTheRestWait() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            BoundedExecutor bounded = new BoundedExecutor(pool, 2);
            CountDownLatch started = new CountDownLatch(2);
            CountDownLatch release = new CountDownLatch(1);
            CountDownLatch done = new CountDownLatch(5);
            for (int i = 0; i < 5; i++) {
                bounded.execute(() -> {
                    started.countDown();
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    done.countDown();
                });
            }
            assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(bounded.active()).isEqualTo(2);
            assertThat(bounded.queued()).isEqualTo(3);
            release.countDown();
            assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aThrowingTaskFreesItsSlot() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            BoundedExecutor bounded = new BoundedExecutor(pool, 1);
            for (int i = 0; i < 10; i++) {
                bounded.execute(() -> {
                    throw new IllegalStateException("handler failed");
                });
            }
            CountDownLatch after = new CountDownLatch(1);
            bounded.execute(after::countDown);
            assertThat(after.await(10, TimeUnit.SECONDS)).isTrue();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void rejectionByTheUnderlyingExecutorFreesTheSlotAndReachesTheCaller() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        pool.shutdown();
        BoundedExecutor bounded = new BoundedExecutor(pool, 1);
        assertThatThrownBy(() -> bounded.execute(() -> { })).isInstanceOf(RejectedExecutionException.class);
        assertThat(bounded.active()).isZero();
        // the slot is free: a working executor behind the same bound would run the next task
        ExecutorService live = Executors.newSingleThreadExecutor();
        try {
            BoundedExecutor again = new BoundedExecutor(live, 1);
            CountDownLatch ran = new CountDownLatch(1);
            again.execute(ran::countDown);
            assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
        } finally {
            live.shutdownNow();
        }
    }

    @Test
    void aFinishingThreadRunsTheWaitingTasksItself() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            BoundedExecutor bounded = new BoundedExecutor(pool, 1);
            CountDownLatch release = new CountDownLatch(1);
            java.util.Set<String> threads = java.util.concurrent.ConcurrentHashMap.newKeySet();
            CountDownLatch done = new CountDownLatch(10);
            bounded.execute(() -> {
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                threads.add(Thread.currentThread().getName());
            });
            for (int i = 0; i < 10; i++) {
                bounded.execute(() -> {
                    threads.add(Thread.currentThread().getName());
                    done.countDown();
                });
            }
            assertThat(bounded.queued()).isEqualTo(10);
            release.countDown();
            assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(threads).as("no thread switch per task while tasks wait").hasSize(1);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aLongRunHandsTheThreadBackToOtherWork() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            BoundedExecutor bounded = new BoundedExecutor(pool, 1);
            CountDownLatch release = new CountDownLatch(1);
            java.util.List<String> order = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
            int tasks = BoundedExecutor.RUN_LENGTH * 2;
            CountDownLatch done = new CountDownLatch(tasks + 1);
            bounded.execute(() -> {
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            for (int i = 0; i < tasks; i++) {
                String name = "bounded-" + i;
                bounded.execute(() -> {
                    order.add(name);
                    done.countDown();
                });
            }
            // Other work on the shared pool, queued behind the bounded run.
            pool.execute(() -> {
                order.add("other");
                done.countDown();
            });
            release.countDown();
            assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
            // The blocker and RUN_LENGTH - 1 waiting tasks ran in a row; then the other work got the thread.
            assertThat(order.indexOf("other")).isEqualTo(BoundedExecutor.RUN_LENGTH - 1);
            assertThat(order).hasSize(tasks + 1);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void rejectsABadBound() {
        assertThatThrownBy(() -> new BoundedExecutor(Runnable::run, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
