package dev.sluice.internal.queue;

import dev.sluice.ErrorCode;
import dev.sluice.JobRun;
import dev.sluice.SluiceException;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.jdbc.Sql;
import dev.sluice.internal.notify.ClientSession;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Completion waits ({@code Queue.await}). A waiter first listens for {@code r:<id>} on the client's session, then
 * marks its presence on the live job ({@code awaited}), then reads the run: an end that committed before the mark
 * is read, one after it is notified (and keeps a record for a waiter even when the job keeps no runs). It waits for
 * the notification, re-reading at a fallback poll (the session may be down) until the job ended or the timeout.
 *
 * <p>Waiters of one job in one process share one registration: many waiters cost one notification and one wake-up.
 * Memory is per awaited job while someone waits, nothing after.
 */
final class RunWaits {
    /** The fallback poll while the session is healthy (a lost notification costs at most this). */
    static final Duration FALLBACK_POLL = Duration.ofSeconds(1);
    /** The poll while the session is down. */
    static final Duration UNHEALTHY_POLL = Duration.ofMillis(200);
    /** The longest timeout accepted. */
    static final Duration MAX_TIMEOUT = Duration.ofDays(1);

    private final Db db;
    private final QueueSql sql;
    private final RunReads reads;
    private final Supplier<ClientSession> sessions;
    private final Map<Long, Shared> waiting = new ConcurrentHashMap<>();

    /** The waiters of one job in this process: one wake registration, a monitor they wait on. */
    private static final class Shared {
        int count;
        long signals;
        AutoCloseable registration;
    }

    RunWaits(Db db, QueueSql sql, RunReads reads, Supplier<ClientSession> sessions) {
        this.db = db;
        this.sql = sql;
        this.reads = reads;
        this.sessions = sessions;
    }

    /**
     * Waits until job {@code id} of {@code queue} ended and returns its run.
     *
     * @throws SluiceException {@link ErrorCode#AWAIT_TIMEOUT} when it is still live at the timeout,
     *                         {@link ErrorCode#JOB_NOT_FOUND} when the queue has no trace of it,
     *                         {@link ErrorCode#INVALID_ARGUMENT} for a timeout out of range
     */
    JobRun await(String queue, long id, Duration timeout) {
        if (timeout == null || timeout.isNegative() || timeout.compareTo(MAX_TIMEOUT) > 0) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "await timeout must be between 0 and " + MAX_TIMEOUT
                    + " (got " + timeout + ")");
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        Shared shared = join(id);
        try {
            // The mark after the registration: an end after the mark notifies a registered listener.
            db.autoCommit("await job " + id, c -> Sql.list(c, sql.runs.awaitMark, rs -> rs.getString(1), queue, id));
            while (true) {
                long seen;
                synchronized (shared) {
                    seen = shared.signals;
                }
                Optional<JobRun> run = reads.run(queue, id);
                if (run.isEmpty()) {
                    throw new SluiceException(ErrorCode.JOB_NOT_FOUND, "queue '" + queue + "' has no job " + id
                            + " (not live, not dead, no run record: a job that ends without keepRuns and without a waiter"
                            + " leaves none)");
                }
                if (run.get().ended()) {
                    return run.get();
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new SluiceException(ErrorCode.AWAIT_TIMEOUT, "job " + id + " of queue '" + queue + "' is still "
                            + run.get().status().dbValue() + " after " + timeout.toMillis() + " ms");
                }
                ClientSession s = sessions.get();
                long poll = (s != null && s.healthy() ? FALLBACK_POLL : UNHEALTHY_POLL).toNanos();
                synchronized (shared) {
                    long until = System.nanoTime() + Math.min(left, poll);
                    for (long w = until - System.nanoTime(); shared.signals == seen && w > 0; w = until - System.nanoTime()) {
                        TimeUnit.NANOSECONDS.timedWait(shared, w);
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SluiceException(ErrorCode.AWAIT_TIMEOUT, "interrupted while awaiting job " + id + " of queue '"
                    + queue + "'", e);
        } finally {
            leave(id, shared);
        }
    }

    private Shared join(long id) {
        while (true) {
            Shared shared = waiting.computeIfAbsent(id, k -> new Shared());
            synchronized (shared) {
                if (waiting.get(id) != shared) {
                    continue; // the last waiter just left it
                }
                if (shared.count++ == 0) {
                    ClientSession s = sessions.get();
                    if (s != null) {
                        shared.registration = s.onWake(RunSql.END_PREFIX + id, () -> signal(shared));
                    }
                }
                return shared;
            }
        }
    }

    private static void signal(Shared shared) {
        synchronized (shared) {
            shared.signals++;
            shared.notifyAll();
        }
    }

    private void leave(long id, Shared shared) {
        AutoCloseable registration = null;
        synchronized (shared) {
            if (--shared.count == 0) {
                waiting.remove(id, shared);
                registration = shared.registration;
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

    /** Jobs someone in this process waits for (tests: nothing is left behind). */
    int waitingJobs() {
        return waiting.size();
    }
}
