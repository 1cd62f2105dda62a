package dev.sluice.internal.queue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Batches the acks of one worker (River's {@code jobcompleter}): completions queue up here and one
 * thread deletes them with one statement per batch ({@link JobStore#ackAll}), each row only while it
 * is still processing under the claim token presented. While one batch is in flight the next one
 * gathers; a small batch that found company lingers up to 1 ms for more, so a busy worker makes few,
 * large batches, and a lone ack (an idle worker) is written at once.
 * A lost claim completes its future with {@code false} and changes nothing, as a single ack would.
 */
final class JobCompleter implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(JobCompleter.class);
    /** Most acks in one statement. */
    static final int MAX_BATCH = 1_000;
    /** A batch smaller than this, when more than one ack was waiting, waits up to {@link #LINGER_NANOS} for more. */
    static final int LINGER_BELOW = 128;
    private static final long LINGER_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** How long {@link #close()} waits for the acks in flight and queued to be written. */
    static final Duration CLOSE_LIMIT = Duration.ofSeconds(10);
    /** A failed batch is tried this often (with a growing pause) before its acks fail. */
    private static final int ATTEMPTS = 4;

    private record Ack(long id, UUID token, CompletableFuture<Boolean> done) {
    }

    private final JobStore store;
    private final Runnable onFlushed;
    private final LinkedBlockingQueue<Ack> queue = new LinkedBlockingQueue<>();
    /** Acks submitted and not yet answered (queued or in the statement in flight). */
    private final AtomicInteger pending = new AtomicInteger();
    private final Thread thread;
    private volatile boolean closing;

    /** A completer for {@code queueName}'s worker, not started yet; {@code onFlushed} runs after every batch. */
    JobCompleter(JobStore store, String queueName, Runnable onFlushed) {
        this.store = store;
        this.onFlushed = onFlushed;
        this.thread = new Thread(this::loop, "sluice-completer-" + queueName);
        this.thread.setDaemon(true);
    }

    /** Starts the completer's thread (until then, and after {@link #close()}, acks run on the caller's thread). */
    void start() {
        thread.start();
    }

    /** Queues the ack of this claim; the future tells whether the row was deleted (false: claim lost). */
    CompletableFuture<Boolean> ack(long id, UUID token) {
        CompletableFuture<Boolean> done = new CompletableFuture<>();
        pending.incrementAndGet();
        queue.add(new Ack(id, token, done));
        if (!thread.isAlive()) {
            // Not running (a handle resolved after its worker stopped): flush on the caller's thread.
            flushQueued();
        }
        return done;
    }

    /** Acks submitted and not answered yet. */
    int pending() {
        return pending.get();
    }

    private void loop() {
        while (!closing || !queue.isEmpty()) {
            try {
                Ack first = queue.poll(50, TimeUnit.MILLISECONDS);
                if (first != null) {
                    List<Ack> batch = new ArrayList<>();
                    batch.add(first);
                    queue.drainTo(batch, MAX_BATCH - 1);
                    if (batch.size() > 1 && batch.size() < LINGER_BELOW) {
                        // Completions are arriving: let a few more join (a commit per statement is the cost).
                        long until = System.nanoTime() + LINGER_NANOS;
                        for (long left = LINGER_NANOS; left > 0 && batch.size() < LINGER_BELOW; left = until - System.nanoTime()) {
                            Ack next = queue.poll(left, TimeUnit.NANOSECONDS);
                            if (next == null) {
                                break;
                            }
                            batch.add(next);
                            queue.drainTo(batch, MAX_BATCH - batch.size());
                        }
                    }
                    flush(batch);
                }
            } catch (InterruptedException e) {
                // Nobody interrupts this thread; keep going until closed and drained.
            }
        }
    }

    private void flushQueued() {
        List<Ack> batch = new ArrayList<>();
        while (queue.drainTo(batch, MAX_BATCH) > 0) {
            flush(batch);
            batch = new ArrayList<>();
        }
    }

    private void flush(List<Ack> batch) {
        long[] ids = new long[batch.size()];
        UUID[] tokens = new UUID[batch.size()];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = batch.get(i).id();
            tokens[i] = batch.get(i).token();
        }
        RuntimeException failure = null;
        for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
            try {
                Set<Long> deleted = store.ackAll(ids, tokens);
                pending.addAndGet(-batch.size());
                for (Ack a : batch) {
                    a.done().complete(deleted.contains(a.id()));
                }
                onFlushed.run();
                return;
            } catch (RuntimeException e) {
                failure = e;
                if (attempt < ATTEMPTS) {
                    log.debug("ack batch failed; retrying: size={} error={}", ids.length, e.toString());
                    try {
                        Thread.sleep(50L << attempt);
                    } catch (InterruptedException ie) {
                        Thread.currentThread().interrupt();
                        break;
                    }
                }
            }
        }
        // Given up: the claims expire and the jobs run again (at-least-once); the callers hear why.
        pending.addAndGet(-batch.size());
        for (Ack a : batch) {
            a.done().completeExceptionally(failure);
        }
        onFlushed.run();
    }

    /** Acks everything queued so far, then stops the thread; waits at most {@link #CLOSE_LIMIT}. */
    @Override
    public void close() {
        close(CLOSE_LIMIT);
    }

    /**
     * Acks everything queued so far, then stops the thread, waiting at most {@code limit} (at least 1 ms):
     * a database that does not answer (a lock held on a job row, a stalled server) must not hang the
     * worker's close. What is left unconfirmed then is logged; those jobs run again after their claims
     * expire, and the thread (a daemon) still writes them if the database answers later.
     */
    void close(Duration limit) {
        closing = true;
        try {
            thread.join(Math.max(1, limit.toMillis()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            log.warn("acks not written within {} ms of close; their jobs run again after their claims expire"
                    + " unless the database answers first: acks={}", limit.toMillis(), pending.get());
            return;
        }
        flushQueued();
    }
}
