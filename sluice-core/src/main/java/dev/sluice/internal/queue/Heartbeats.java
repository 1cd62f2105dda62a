package dev.sluice.internal.queue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import dev.sluice.internal.jdbc.SqlErrors;
import dev.sluice.internal.runtime.PollLoop;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A worker's heartbeats, a {@link PollLoop} on the client's shared scheduler: each claim the worker holds is extended every third of its stamped
 * visibility timeout, all claims due at once in one statement ({@link JobStore#heartbeat}); jobs that
 * finish faster never cost one. A refused heartbeat marks the claim lost (logged once); a failed one is
 * retried after a tenth of the visibility timeout (at least 50 ms). The loop waits until the next
 * claim is due (at most a second); a new claim due sooner brings its next run forward ({@link #scheduled}).
 */
final class Heartbeats<T> {
    /** The worker's logger: heartbeat warnings read as the worker's. */
    private static final Logger log = LoggerFactory.getLogger(QueueWorker.class);

    private final JobStore store;
    private final String queue;
    /** The worker's claimed jobs (read only here). */
    private final Map<Long, RunningJob<T>> inflight;
    /** The worker's rate-limited warning. */
    private final BiConsumer<String, Throwable> warn;
    private final PollLoop loop;
    /** While a run scans the claims: a new claim then always brings the next run forward. */
    private volatile boolean scanning;
    /** When the loop runs next by itself (so a new claim wakes it only when due sooner). */
    private volatile long wakeNanos;

    Heartbeats(JobStore store, String queue, Map<Long, RunningJob<T>> inflight, BiConsumer<String, Throwable> warn,
               ScheduledExecutorService scheduler) {
        this.store = store;
        this.queue = queue;
        this.inflight = inflight;
        this.warn = warn;
        this.loop = new PollLoop("heartbeats " + queue, scheduler, this::poll, SqlErrors::maxPollBackoffMillis);
    }

    void start() {
        wakeNanos = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        loop.start(TimeUnit.SECONDS.toNanos(1));
    }

    /** A claim whose first heartbeat is due at {@code firstBeatNanos} joined the worker's jobs. */
    void scheduled(long firstBeatNanos) {
        // The claim is in the worker's map before this runs: a scan that began earlier may have missed it.
        if (scanning || firstBeatNanos - wakeNanos < 0) {
            loop.wakeWithin(firstBeatNanos - System.nanoTime());
        }
    }

    /** Stops the loop (waits for a beat in progress). */
    void stop() {
        loop.close();
    }

    /** One run: beats the claims that are due; returns the wait until the next one is (at most a second). */
    private long poll() {
        scanning = true;
        long now = System.nanoTime();
        long next = now + TimeUnit.SECONDS.toNanos(1);
        List<RunningJob<T>> due = new ArrayList<>();
        for (RunningJob<T> r : inflight.values()) {
            if (r.lost || r.handle.resolved()) {
                continue;
            }
            if (r.nextBeatNanos - now <= 0) {
                due.add(r);
            } else {
                next = Math.min(next, r.nextBeatNanos);
            }
        }
        if (!due.isEmpty()) {
            beat(due, now);
            return 0; // scan again: the beaten claims' next beats, and any that came due meanwhile
        }
        wakeNanos = next;
        scanning = false;
        return next - now;
    }

    private void beat(List<RunningJob<T>> due, long now) {
        long[] ids = new long[due.size()];
        UUID[] tokens = new UUID[due.size()];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = due.get(i).handle.id();
            tokens[i] = due.get(i).handle.token();
        }
        try {
            Map<Long, JobStore.Beat> renewed = store.heartbeat(ids, tokens);
            for (RunningJob<T> r : due) {
                JobStore.Beat until = renewed.get(r.handle.id());
                if (until != null) {
                    r.handle.extended(until);
                    r.nextBeatNanos = now + r.handle.visibilityTimeoutNanos() / 3;
                } else if (!r.handle.resolved()) {
                    r.lost = true;
                    log.warn("heartbeat refused, claim lost (expired or taken over): queue={} job={}", queue, r.handle.id());
                }
            }
        } catch (RuntimeException e) {
            warn.accept("heartbeat failed; retrying", e);
            for (RunningJob<T> r : due) {
                r.nextBeatNanos = now + Math.max(TimeUnit.MILLISECONDS.toNanos(50), r.handle.visibilityTimeoutNanos() / 10);
            }
        }
    }
}
