package dev.sluice.internal.queue;

import dev.sluice.internal.notify.ClientSession;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Claims that wait for work ({@code Queue.claim(n, wait)}): the caller's thread claims, and while nothing is due it
 * waits on a monitor for the queue's enqueue wake-up ({@code q:<queue>} on the client's session, the one the workers
 * use), for the next delayed job to come due, or for the fallback poll, until the deadline. No thread is started and
 * nothing spins: a waiting caller costs a claim and a probe per wake-up or poll.
 *
 * <p>Callers waiting on one queue in one process share one wake registration and hand wake-ups on as permits: a
 * wake-up lets one waiter claim; a waiter whose claim came back full (there may be more) passes a permit to the next.
 * So one enqueued job wakes one claim, not every waiter's. Permits are kept while waiters are claiming (at most one
 * per waiter), so a wake-up that arrives between a waiter's claim and its wait is not lost.
 */
final class ClaimWaits {
    /** The longest wait accepted. */
    static final Duration MAX_WAIT = Duration.ofSeconds(60);
    /** The fallback poll while the session is healthy (a lost wake-up costs at most this). */
    static final long HEALTHY_POLL_NANOS = TimeUnit.SECONDS.toNanos(5);
    /** The poll while the session is down, or absent (the workers' default poll interval). */
    static final long UNHEALTHY_POLL_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** The shortest pause: a due job that another claimer holds locked is taken within it. */
    static final long MIN_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(25);

    private final JobClaims claims;
    private final Supplier<ClientSession> sessions;
    private final Map<String, Waiters> waiting = new ConcurrentHashMap<>();

    /** The waiting callers of one queue in this process: one wake registration, a monitor with permits. */
    private static final class Waiters {
        int count;
        int permits;
        AutoCloseable registration;

        /** A wake-up: one more waiter may claim (never more permits than waiters). */
        synchronized void signal() {
            if (permits < count) {
                permits++;
            }
            notify();
        }

        /** Waits up to {@code nanos} for a permit; whether one was taken. */
        synchronized boolean await(long nanos) throws InterruptedException {
            long until = System.nanoTime() + nanos;
            for (long left = nanos; permits == 0; left = until - System.nanoTime()) {
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
            permits--;
            return true;
        }
    }

    ClaimWaits(JobClaims claims, Supplier<ClientSession> sessions) {
        this.claims = claims;
        this.sessions = sessions;
    }

    /**
     * Claims up to {@code n} due jobs of {@code queue}, waiting up to {@code wait} (validated by the caller) while
     * none is due; returns as soon as one or more were claimed, or empty at the deadline (or when interrupted, with
     * the interrupt flag set again).
     */
    List<JobStore.Claimed> claim(String queue, int n, String workerId, Duration wait) {
        if (wait.isZero()) {
            return claims.claim(queue, n, workerId, ClaimHints.Bounds.NONE);
        }
        long deadline = System.nanoTime() + wait.toNanos();
        // Registered before the first claim: a job enqueued after that claim's snapshot wakes us.
        Waiters w = join(queue);
        try {
            while (true) {
                List<JobStore.Claimed> got = claims.claim(queue, n, workerId, ClaimHints.Bounds.NONE);
                if (!got.isEmpty()) {
                    if (got.size() == n) {
                        w.signal(); // there may be more: the next waiter claims too
                    }
                    return got;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return got;
                }
                w.await(Math.min(left, pause(queue)));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return List.of();
        } finally {
            leave(queue, w);
        }
    }

    /** How long to wait for a wake-up: the fallback poll, or less when a delayed job comes due sooner. */
    private long pause(String queue) {
        ClientSession s = sessions.get();
        long poll = s != null && s.healthy() ? HEALTHY_POLL_NANOS : UNHEALTHY_POLL_NANOS;
        JobStore.NextDue next = claims.nextDue(queue);
        if (next.at() == null) {
            return poll;
        }
        long until = Duration.between(next.now(), next.at()).toNanos() + TimeUnit.MILLISECONDS.toNanos(1);
        return Math.min(poll, Math.max(until, MIN_PAUSE_NANOS));
    }

    private Waiters join(String queue) {
        while (true) {
            Waiters w = waiting.computeIfAbsent(queue, k -> new Waiters());
            synchronized (w) {
                if (waiting.get(queue) != w) {
                    continue; // its last waiter just left it
                }
                if (w.count++ == 0) {
                    ClientSession s = sessions.get();
                    if (s != null) {
                        w.registration = s.onWake(JobStore.wakeKey(queue), w::signal);
                    }
                }
                return w;
            }
        }
    }

    private void leave(String queue, Waiters w) {
        AutoCloseable registration = null;
        synchronized (w) {
            w.count--;
            w.permits = Math.min(w.permits, w.count);
            if (w.count > 0 && w.permits > 0) {
                w.notify(); // a permit this waiter did not use goes to another
            }
            if (w.count == 0) {
                waiting.remove(queue, w);
                registration = w.registration;
            }
        }
        if (registration != null) {
            try {
                registration.close();
            } catch (Exception ignored) {
                // a wake registration has nothing to fail on
            }
        }
    }

    /** Queues someone in this process waits to claim from right now (tests: nothing is left behind). */
    int waitingQueues() {
        return waiting.size();
    }
}
