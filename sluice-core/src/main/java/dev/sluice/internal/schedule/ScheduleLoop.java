package dev.sluice.internal.schedule;

import dev.sluice.ScheduleFire;
import dev.sluice.ScheduleRunner;
import dev.sluice.internal.notify.ClientSession;
import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The runner behind {@link ScheduleRunner}: one thread that repeats {@link ScheduleStore#tick} while
 * something is due, then sleeps until the earliest next due time, at most {@link #MAX_SLEEP} (so schedules
 * changed by other processes are seen), woken early by the schema's notification for schedules. A due row
 * another runner is firing makes it wait a short jittered moment, never spin. A failing schedule is backed
 * off alone (1 s doubling to 1 min); any other error backs the whole runner off (250 ms doubling to 30 s).
 */
public final class ScheduleLoop implements ScheduleRunner {
    private static final Logger log = LoggerFactory.getLogger(ScheduleLoop.class);
    /** The longest sleep between two looks at the schedules. */
    static final Duration MAX_SLEEP = Duration.ofSeconds(1);
    /** The wait when the earliest due schedule is being fired by another runner. */
    private static final long BUSY_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    private static final long MAX_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(30);
    private static final long MAX_SCHEDULE_BACKOFF_NANOS = TimeUnit.MINUTES.toNanos(1);

    private final ScheduleStore store;
    private final ClientSession session;
    private final Runnable onClose;
    private final Thread thread;
    private final AtomicLong fires = new AtomicLong();
    /** Failing schedules: id → (nanoTime until which it is left out, consecutive failures). */
    private final Map<Long, long[]> backoff = new ConcurrentHashMap<>();
    private volatile boolean closed;
    private volatile boolean woken;
    private volatile long lastWarn;
    private AutoCloseable wakeRegistration;
    /** Whether the schedules' fleet instance may fire (paused by target 0, a standby beyond its target). */
    private final dev.sluice.internal.runtime.WorkGate gate;

    /** A runner that is not started yet; {@code session} may be null (then it only polls). */
    public ScheduleLoop(ScheduleStore store, ClientSession session, String schema, Runnable onClose,
                        dev.sluice.internal.runtime.WorkGate gate) {
        this.gate = gate;
        this.store = store;
        this.session = session;
        this.onClose = onClose;
        this.thread = new Thread(this::run, "sluice-schedules-" + schema);
        this.thread.setDaemon(true);
    }

    /** Starts the thread. */
    public void start() {
        if (session != null) {
            wakeRegistration = session.onWake(ScheduleStore.wakeKey(), this::wake);
        }
        gate.onOpen(this::wake);
        thread.start();
    }

    private void wake() {
        woken = true;
        LockSupport.unpark(thread);
    }

    @Override
    public long fires() {
        return fires.get();
    }

    @Override
    public boolean isRunning() {
        return !closed && thread.isAlive();
    }

    private void run() {
        int failures = 0;
        while (!closed) {
            long sleep;
            if (!gate.open()) {
                woken = false;
                park(TimeUnit.SECONDS.toNanos(1)); // paused or a standby: fires nothing until the gate opens
                continue;
            }
            try {
                woken = false;
                ScheduleStore.Tick tick = store.tick(excluded());
                failures = 0;
                if (!tick.fired().isEmpty()) {
                    fired(tick);
                    continue;
                }
                sleep = sleepFor(tick.nextDueAt(), tick.now());
            } catch (ScheduleStore.FireFailed e) {
                long[] state = backoff.computeIfAbsent(e.scheduleId(), k -> new long[2]);
                state[1]++;
                long wait = Math.min(MAX_SCHEDULE_BACKOFF_NANOS, TimeUnit.SECONDS.toNanos(1) << Math.min(state[1] - 1, 6));
                state[0] = System.nanoTime() + wait;
                warn("schedule fire failed; retrying it in " + TimeUnit.NANOSECONDS.toMillis(wait) + " ms: schedule="
                        + e.schedule(), e.getCause());
                continue;
            } catch (RuntimeException e) {
                failures++;
                long ceiling = Math.min(MAX_BACKOFF_NANOS, TimeUnit.MILLISECONDS.toNanos(250) << Math.min(failures - 1, 7));
                sleep = ThreadLocalRandom.current().nextLong(ceiling / 2, ceiling + 1);
                warn("schedule runner step failed; backing off " + TimeUnit.NANOSECONDS.toMillis(sleep) + " ms", e);
            }
            park(sleep);
        }
    }

    private void fired(ScheduleStore.Tick tick) {
        fires.addAndGet(tick.fired().size());
        ScheduleFire first = tick.fired().get(0);
        if (tick.dropped() > 0) {
            log.info("schedule missed due times after downtime; dropped the oldest: schedule={} dropped={} fired={}",
                    first.schedule(), tick.dropped(), tick.fired().size());
        }
        if (log.isDebugEnabled()) {
            for (ScheduleFire f : tick.fired()) {
                log.debug("schedule fired: schedule={} dueAt={} target={} id={} duplicate={}", f.schedule(), f.dueAt(),
                        f.target(), f.id(), f.duplicate());
            }
        }
    }

    /** How long to sleep, by the database clock: until the next due time, at most {@link #MAX_SLEEP}. */
    private long sleepFor(Instant next, Instant now) {
        long max = MAX_SLEEP.toNanos();
        if (next == null) {
            return max;
        }
        long until = Duration.between(now, next).toNanos();
        if (until <= 0) {
            // Due, but locked by another runner firing it (or backing off here): look again shortly.
            return ThreadLocalRandom.current().nextLong(BUSY_WAIT_NANOS / 2, BUSY_WAIT_NANOS + 1);
        }
        // A millisecond late rather than early: an early wake-up would find nothing due and sleep again.
        return Math.min(max, until + TimeUnit.MILLISECONDS.toNanos(1));
    }

    private long[] excluded() {
        if (backoff.isEmpty()) {
            return new long[0];
        }
        long now = System.nanoTime();
        long[] out = new long[backoff.size()];
        int n = 0;
        for (Iterator<Map.Entry<Long, long[]>> it = backoff.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<Long, long[]> e = it.next();
            if (now - e.getValue()[0] < 0) {
                out[n++] = e.getKey();
            } else if (now - e.getValue()[0] > MAX_SCHEDULE_BACKOFF_NANOS * 2) {
                it.remove(); // long quiet after its last failure: start its backoff from scratch next time
            }
        }
        return java.util.Arrays.copyOf(out, n);
    }

    private void park(long nanos) {
        long until = System.nanoTime() + nanos;
        long left;
        while (!closed && !woken && (left = until - System.nanoTime()) > 0) {
            LockSupport.parkNanos(this, left);
        }
    }

    private void warn(String what, Throwable e) {
        long now = System.nanoTime();
        if (now - lastWarn > TimeUnit.SECONDS.toNanos(30)) {
            lastWarn = now;
            log.warn("{}: error={}", what, String.valueOf(e));
        } else {
            log.debug("{}: error={}", what, String.valueOf(e));
        }
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        LockSupport.unpark(thread);
        if (Thread.currentThread() != thread) {
            try {
                thread.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (wakeRegistration != null) {
            try {
                wakeRegistration.close();
            } catch (Exception e) {
                log.debug("closing the wake-up registration failed: {}", e.toString());
            }
        }
        onClose.run();
    }

    @Override
    public String toString() {
        return "ScheduleRunner[" + thread.getName() + "]";
    }
}
