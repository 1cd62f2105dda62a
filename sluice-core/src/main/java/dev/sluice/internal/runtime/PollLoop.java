package dev.sluice.internal.runtime;

import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The poll/park loop of a consumer or worker, run as tasks on a shared scheduler instead of a thread of its
 * own: each run polls once and says how long to wait; the next run is scheduled after that wait, or at once
 * when {@link #wake()} is called (a notification, a finished handler). Idle loops cost a scheduled task each,
 * not a thread, so threads do not grow with the number of groups or queues.
 *
 * <p>Guarantees: runs of one loop never overlap; a wake during a run makes the next run start right after it
 * (never lost); a wake during a wait starts the next run at once; a failing poll is retried after a backoff
 * that doubles from 100 ms up to what {@code maxBackoffMillis} allows for the failure; {@link #close()}
 * blocks until a run in progress has ended (unless called from that run; at most 10 s) and no run starts after it.
 */
public final class PollLoop implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PollLoop.class);
    private static final long FIRST_BACKOFF_MILLIS = 100;
    /** How long {@link #close()} waits at most for a run in progress (one stuck on a lock must not hang close). */
    private static final long CLOSE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(10);

    /** One poll: returns how long to wait before the next, in nanoseconds (0: poll again at once). */
    @FunctionalInterface
    public interface Poll {
        long pollOnce() throws Exception;
    }

    private final String name;
    private final ScheduledExecutorService scheduler;
    private final Poll poll;
    private final ToLongFunction<Exception> maxBackoffMillis;

    private ScheduledFuture<?> next;
    private Thread runner;
    /** The longest wait the run in progress may schedule next ({@link #wakeWithin}); reset when a run starts. */
    private long wakeWithinNanos = Long.MAX_VALUE;
    private boolean started;
    private boolean closed;
    private long backoffMillis = FIRST_BACKOFF_MILLIS;

    /**
     * @param name             for logs ("consumer orders/billing")
     * @param maxBackoffMillis the longest backoff after a given failure (for example shorter for a lost connection)
     */
    public PollLoop(String name, ScheduledExecutorService scheduler, Poll poll, ToLongFunction<Exception> maxBackoffMillis) {
        this.name = name;
        this.scheduler = scheduler;
        this.poll = poll;
        this.maxBackoffMillis = maxBackoffMillis;
    }

    /** Schedules the first run now; idempotent. */
    public void start() {
        start(0);
    }

    /** Schedules the first run after {@code delayNanos}; idempotent. */
    public synchronized void start(long delayNanos) {
        if (started || closed) {
            return;
        }
        started = true;
        next = scheduler.schedule(this::run, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
    }

    /** Makes the next run start now (or right after the run in progress). */
    public void wake() {
        wakeWithin(0);
    }

    /**
     * Makes the next run start within {@code nanos} from now (or that long after the run in progress ends, at
     * the latest): a later scheduled run is brought forward, an earlier one is kept.
     */
    public synchronized void wakeWithin(long nanos) {
        if (!started || closed) {
            return;
        }
        long within = Math.max(0, nanos);
        if (runner != null) {
            wakeWithinNanos = Math.min(wakeWithinNanos, within);
        } else if (next != null && next.getDelay(TimeUnit.NANOSECONDS) > within && next.cancel(false)) {
            next = scheduler.schedule(this::run, within, TimeUnit.NANOSECONDS);
        }
    }

    /** How long until the next run is due (0 while a run is in progress or none is scheduled); for tests. */
    public synchronized long waitingNanos() {
        return runner != null || next == null ? 0 : Math.max(0, next.getDelay(TimeUnit.NANOSECONDS));
    }

    private void run() {
        synchronized (this) {
            if (closed || runner != null) {
                return;
            }
            runner = Thread.currentThread();
            wakeWithinNanos = Long.MAX_VALUE;
            next = null;
        }
        long waitNanos;
        try {
            waitNanos = Math.max(0, poll.pollOnce());
            backoffMillis = FIRST_BACKOFF_MILLIS;
        } catch (Exception e) {
            log.warn("{}: poll failed, retrying in {} ms: {}", name, backoffMillis, e.toString());
            waitNanos = TimeUnit.MILLISECONDS.toNanos(backoffMillis);
            backoffMillis = Math.max(FIRST_BACKOFF_MILLIS, Math.min(maxBackoffMillis.applyAsLong(e), backoffMillis * 2));
        } catch (Error e) {
            synchronized (this) {
                runner = null;
                notifyAll();
            }
            throw e;
        }
        synchronized (this) {
            runner = null;
            if (closed) {
                notifyAll();
                return;
            }
            waitNanos = Math.min(waitNanos, wakeWithinNanos);
            try {
                next = scheduler.schedule(this::run, waitNanos, TimeUnit.NANOSECONDS);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                log.debug("{}: scheduler shut down, loop ends", name);
            }
        }
    }

    /** Whether the loop was started and not closed. */
    public synchronized boolean running() {
        return started && !closed;
    }

    @Override
    public void close() {
        close(true);
    }

    /**
     * Stops the loop without waiting for a run in progress (one stuck on a lock, say): no run starts after
     * this, and the one in progress ends on its own.
     */
    public void cancel() {
        close(false);
    }

    private void close(boolean await) {
        synchronized (this) {
            closed = true;
            if (next != null) {
                next.cancel(false);
                next = null;
            }
            if (!await) {
                return;
            }
            boolean interrupted = false;
            long deadline = System.nanoTime() + CLOSE_WAIT_NANOS;
            while (runner != null && runner != Thread.currentThread()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    log.warn("{}: a poll still runs after {} s; closing without it (it ends on its own)", name,
                            TimeUnit.NANOSECONDS.toSeconds(CLOSE_WAIT_NANOS));
                    break;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(this, left);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public String toString() {
        return name;
    }
}
