package dev.sluice.internal.queue;

import dev.sluice.internal.jdbc.SqlErrors;
import dev.sluice.internal.runtime.PollLoop;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Batches the acks of one worker (River's {@code jobcompleter}): completions queue up here and a
 * {@link PollLoop} on the client's shared scheduler deletes them with one statement per batch
 * ({@link JobStore#ackAll}), each row only while it is still processing under the claim token presented.
 * While one batch is in flight the next one gathers; a small batch that found company waits 1 ms for
 * more (a later run, not a parked thread), so a busy worker makes few, large batches, and a lone ack (an
 * idle worker) is written at once. A failed batch is tried again after a growing pause (the loop's next
 * wait). A lost claim completes its future with {@code false} and changes nothing, as a single ack would.
 *
 * <p>A handler's {@code ack()} waits for its batch on the handler's thread; no scheduler task ever waits
 * for another one.
 */
final class JobCompleter implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(JobCompleter.class);
    /** Most acks in one statement. */
    static final int MAX_BATCH = 1_000;
    /** A batch smaller than this, when more than one ack was waiting, waits {@link #LINGER_NANOS} for more. */
    static final int LINGER_BELOW = 128;
    private static final long LINGER_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** How long {@link #close()} waits for the acks in flight and queued to be written. */
    static final Duration CLOSE_LIMIT = Duration.ofSeconds(10);
    /** A failed batch is tried this often (with a growing pause) before its acks fail. */
    private static final int ATTEMPTS = 4;
    /** The wait of an idle loop: every new ack wakes it. */
    private static final long IDLE_NANOS = TimeUnit.HOURS.toNanos(1);

    /** The result bytes one finish statement carries at most (a batch with more is split). */
    static final long MAX_RESULT_BYTES = 16L << 20;

    /**
     * One completion: the claim, the result (null for none), and whether the job keeps runs (known from the claim: it
     * skips the plain ack, which would refuse it).
     */
    private record Ack(long id, UUID token, byte[] result, String resultContentType, boolean recorded,
                       CompletableFuture<Boolean> done) {
        boolean plain() {
            return result == null && !recorded;
        }
    }

    private final JobStore store;
    private final Runnable onFlushed;
    private final LinkedBlockingQueue<Ack> queue = new LinkedBlockingQueue<>();
    /** Acks submitted and not yet answered (queued, in the statement in flight, or waiting for a retry). */
    private final AtomicInteger pending = new AtomicInteger();
    private final PollLoop loop;
    /** A scheduler of the completer's own (standalone use), shut down when the loop ends; null on a client's. */
    private final ScheduledExecutorService own;
    private volatile boolean closing;
    /** A failed batch waits for its next attempt: new acks then do not wake the loop early. */
    private volatile boolean retrying;
    // Loop runs only:
    private List<Ack> retry;
    private int attempt;
    private long retryAt;
    private boolean lingered;

    /** A completer on the client's shared scheduler, not started yet; {@code onFlushed} runs after every batch. */
    JobCompleter(JobStore store, String queueName, Runnable onFlushed, ScheduledExecutorService scheduler) {
        this(store, queueName, onFlushed, scheduler, null);
    }

    /** A standalone completer with a scheduler thread of its own (ended with the completer); not started yet. */
    JobCompleter(JobStore store, String queueName, Runnable onFlushed) {
        this(store, queueName, onFlushed, null, Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "sluice-completer-" + queueName);
            t.setDaemon(true);
            return t;
        }));
    }

    private JobCompleter(JobStore store, String queueName, Runnable onFlushed, ScheduledExecutorService scheduler,
                         ScheduledExecutorService own) {
        this.store = store;
        this.onFlushed = onFlushed;
        this.own = own;
        this.loop = new PollLoop("acks " + queueName, own != null ? own : scheduler, this::poll, SqlErrors::maxPollBackoffMillis);
    }

    /** Starts the loop (until then, and after {@link #close()}, acks are written on the caller's thread). */
    void start() {
        loop.start(IDLE_NANOS);
    }

    /** Queues the ack of this claim; the future tells whether the job ended (false: claim lost). */
    CompletableFuture<Boolean> ack(long id, UUID token) {
        return ack(id, token, null, null, false);
    }

    /**
     * Queues the completion of this claim with a result (null for none); {@code recorded}: the job keeps runs. The
     * future tells whether the job ended (succeeded, or cancelled when a cancel was requested; false: claim lost).
     */
    CompletableFuture<Boolean> ack(long id, UUID token, byte[] result, String resultContentType, boolean recorded) {
        CompletableFuture<Boolean> done = new CompletableFuture<>();
        int n = pending.incrementAndGet();
        queue.add(new Ack(id, token, result, resultContentType, recorded, done));
        if (loop.running() && !retrying) {
            // A lone ack is written at once; one that found company joins the next batch within the linger.
            loop.wakeWithin(n == 1 ? 0 : LINGER_NANOS);
        }
        if (!loop.running()) {
            // Not running (a handle resolved after its worker stopped): flush on the caller's thread.
            flushQueued();
        }
        return done;
    }

    /** Acks submitted and not answered yet. */
    int pending() {
        return pending.get();
    }

    /** One run of the loop: a retry that is due, or the next batch; returns the wait before the next run. */
    private long poll() {
        if (retry != null) {
            long wait = retryAt - System.nanoTime();
            if (wait > 0) {
                return wait; // woken early: the pause is not over
            }
            List<Ack> batch = retry;
            retry = null;
            attempt(batch);
            return next();
        }
        int size = queue.size();
        if (size == 0) {
            lingered = false;
            return next();
        }
        if (!lingered && !closing && size > 1 && size < LINGER_BELOW) {
            lingered = true; // completions are arriving: let a few more join (a commit per statement is the cost)
            return LINGER_NANOS;
        }
        lingered = false;
        List<Ack> batch = new ArrayList<>();
        queue.drainTo(batch, MAX_BATCH);
        attempt = 1;
        attempt(batch);
        return next();
    }

    private long next() {
        if (retry != null) {
            return Math.max(0, retryAt - System.nanoTime());
        }
        if (!queue.isEmpty()) {
            return 0;
        }
        if (closing) {
            // Everything is written: the loop ends (close() may have stopped waiting for it already).
            loop.close();
            if (own != null) {
                own.shutdown();
            }
            synchronized (this) {
                notifyAll();
            }
        }
        return IDLE_NANOS;
    }

    /** One attempt at a batch on the loop; a failure before the last attempt keeps it for a later run. */
    private void attempt(List<Ack> batch) {
        try {
            write(batch);
            retrying = false;
        } catch (RuntimeException e) {
            if (attempt < ATTEMPTS) {
                log.debug("ack batch failed; retrying: size={} error={}", batch.size(), e.toString());
                retry = batch;
                retryAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50L << attempt);
                attempt++;
                retrying = true;
                return;
            }
            retrying = false;
            fail(batch, e);
        }
    }

    /**
     * Plain acks first, in one statement; what it refused (records, waiters, cancel requests, children — or a lost
     * claim) and the completions with results go through {@link JobStore#finish}, which tells the lost ones.
     */
    private void write(List<Ack> batch) {
        List<Ack> plain = new ArrayList<>();
        List<Ack> recorded = new ArrayList<>();
        for (Ack a : batch) {
            (a.plain() ? plain : recorded).add(a);
        }
        Set<Long> ended = new java.util.HashSet<>();
        if (!plain.isEmpty()) {
            long[] ids = new long[plain.size()];
            UUID[] tokens = new UUID[plain.size()];
            for (int i = 0; i < ids.length; i++) {
                ids[i] = plain.get(i).id();
                tokens[i] = plain.get(i).token();
            }
            Set<Long> deleted = store.ackAll(ids, tokens);
            ended.addAll(deleted);
            if (deleted.size() < plain.size()) {
                for (Ack a : plain) {
                    if (!deleted.contains(a.id())) {
                        recorded.add(a);
                    }
                }
            }
        }
        for (List<JobEnds.Finish> chunk : chunks(recorded)) {
            ended.addAll(store.finish(chunk).keySet());
        }
        pending.addAndGet(-batch.size());
        for (Ack a : batch) {
            a.done().complete(ended.contains(a.id()));
        }
        onFlushed.run();
    }

    /** The completions as finish batches of distinct ids and at most {@link #MAX_RESULT_BYTES} of results each. */
    private static List<List<JobEnds.Finish>> chunks(List<Ack> acks) {
        List<List<JobEnds.Finish>> out = new ArrayList<>();
        List<JobEnds.Finish> chunk = new ArrayList<>();
        Set<Long> ids = new java.util.HashSet<>();
        long bytes = 0;
        for (Ack a : acks) {
            long size = a.result() == null ? 0 : a.result().length;
            if (!chunk.isEmpty() && (bytes + size > MAX_RESULT_BYTES || ids.contains(a.id()))) {
                out.add(chunk);
                chunk = new ArrayList<>();
                ids.clear();
                bytes = 0;
            }
            chunk.add(new JobEnds.Finish(a.id(), a.token(), a.result(), a.resultContentType()));
            ids.add(a.id());
            bytes += size;
        }
        if (!chunk.isEmpty()) {
            out.add(chunk);
        }
        return out;
    }

    /** Given up: the claims expire and the jobs run again (at-least-once); the callers hear why. */
    private void fail(List<Ack> batch, RuntimeException failure) {
        pending.addAndGet(-batch.size());
        for (Ack a : batch) {
            a.done().completeExceptionally(failure);
        }
        onFlushed.run();
    }

    /** Writes what is queued on the caller's thread (the loop does not run), with the same attempts. */
    private void flushQueued() {
        List<Ack> batch = new ArrayList<>();
        while (queue.drainTo(batch, MAX_BATCH) > 0) {
            for (int n = 1; ; n++) {
                try {
                    write(batch);
                    break;
                } catch (RuntimeException e) {
                    if (n >= ATTEMPTS) {
                        fail(batch, e);
                        break;
                    }
                    log.debug("ack batch failed; retrying: size={} error={}", batch.size(), e.toString());
                    try {
                        Thread.sleep(50L << n);
                    } catch (InterruptedException ie) {
                        Thread.currentThread().interrupt();
                        fail(batch, e);
                        break;
                    }
                }
            }
            batch = new ArrayList<>();
        }
    }

    /** Acks everything queued so far, then stops the loop; waits at most {@link #CLOSE_LIMIT}. */
    @Override
    public void close() {
        close(CLOSE_LIMIT);
    }

    /**
     * Acks everything queued so far, then stops the loop, waiting at most {@code limit} (at least 1 ms):
     * a database that does not answer (a lock held on a job row, a stalled server) must not hang the
     * worker's close. What is left unconfirmed then is logged; those jobs run again after their claims
     * expire, and the loop still writes them, and then ends, if the database answers later.
     */
    void close(Duration limit) {
        closing = true;
        if (loop.running()) {
            loop.wake();
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(1, limit.toMillis()));
            boolean interrupted = false;
            synchronized (this) {
                for (long left = deadline - System.nanoTime(); loop.running() && left > 0; left = deadline - System.nanoTime()) {
                    try {
                        TimeUnit.NANOSECONDS.timedWait(this, left);
                    } catch (InterruptedException e) {
                        interrupted = true;
                        break;
                    }
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            if (loop.running()) {
                log.warn("acks not written within {} ms of close; their jobs run again after their claims expire"
                        + " unless the database answers first: acks={}", limit.toMillis(), pending.get());
                return;
            }
        } else {
            loop.close(); // never started: it must not start later
            if (own != null) {
                own.shutdown();
            }
        }
        flushQueued();
    }
}
