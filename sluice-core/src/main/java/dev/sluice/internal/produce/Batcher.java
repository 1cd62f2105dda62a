package dev.sluice.internal.produce;

import dev.sluice.ErrorCode;
import dev.sluice.Produced;
import dev.sluice.SluiceException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The commit-driven batcher: concurrent produce calls queue up while up to {@code maxInFlight} batch
 * transactions run; when one finishes, everything queued (up to {@code maxBatchSize}) becomes the next
 * batch. There is no linger timer: at light load a message goes alone and at once, under load batches
 * grow by themselves. Each request keeps its own future.
 *
 * <p>The buffer (queued plus in-flight messages) is bounded in messages and bytes: two atomic counters
 * reserve room on submit and are released when the message's outcome is known, so a hung database
 * cannot grow the heap without end. Waiting for room is the slow path only (a monitor, woken after a
 * batch when someone waits).
 */
final class Batcher {
    /** One queued message and its caller's future. */
    record Request(Encoded message, CompletableFuture<Produced> future, long bytes) {
    }

    /** Bounds of the buffer and how long a blocking submit waits for room. */
    record Bounds(int maxMessages, long maxBytes, Duration timeout) {
    }

    private final LinkedBlockingQueue<Request> queue = new LinkedBlockingQueue<>();
    private final int maxBatchSize;
    private final Bounds bounds;
    private final Thread[] workers;
    private final Consumer<List<Request>> flush;
    private final Object admission = new Object();
    private final AtomicLong bufferedMessages = new AtomicLong();
    private final AtomicLong bufferedBytes = new AtomicLong();
    /** Callers waiting for room; guarded by {@code room}, read without it by the workers. */
    private final Object room = new Object();
    private volatile int waiting;
    private volatile boolean closed;

    Batcher(String name, int maxBatchSize, int maxInFlight, Bounds bounds, Consumer<List<Request>> flush) {
        this.maxBatchSize = maxBatchSize;
        this.bounds = bounds;
        this.flush = flush;
        // Each worker is one transaction in flight: it takes whatever queued while it was committing.
        this.workers = new Thread[maxInFlight];
        for (int i = 0; i < maxInFlight; i++) {
            Thread t = new Thread(this::work, "sluice-produce-" + name + "-" + (i + 1));
            t.setDaemon(true);
            workers[i] = t;
            t.start();
        }
    }

    /**
     * Queues a message. Fails the future at once when the batcher is closed, or with
     * {@link ErrorCode#PRODUCER_BUFFER_FULL} when the buffer is full and {@code wait} is false (or
     * stays full for the buffer timeout).
     */
    CompletableFuture<Produced> submit(Encoded message, boolean wait) {
        CompletableFuture<Produced> f = new CompletableFuture<>();
        long bytes = message.bufferedBytes();
        if (!reserve(bytes) && !(wait && awaitRoom(bytes))) {
            f.completeExceptionally(closed ? closedError() : full());
            return f;
        }
        synchronized (admission) {
            if (closed) {
                release(1, bytes);
                f.completeExceptionally(closedError());
                return f;
            }
            queue.add(new Request(message, f, bytes));
        }
        return f;
    }

    /** Takes room for one message; a message larger than the byte bound still fits an empty buffer. */
    private boolean reserve(long bytes) {
        if (bufferedMessages.incrementAndGet() > bounds.maxMessages()) {
            bufferedMessages.decrementAndGet();
            return false;
        }
        long total = bufferedBytes.addAndGet(bytes);
        if (total > bounds.maxBytes() && total != bytes) {
            bufferedBytes.addAndGet(-bytes);
            bufferedMessages.decrementAndGet();
            return false;
        }
        return true;
    }

    /** The slow path: waits up to the buffer timeout for a batch to free room. */
    private boolean awaitRoom(long bytes) {
        long deadline = System.nanoTime() + bounds.timeout().toNanos();
        synchronized (room) {
            waiting++;
            try {
                while (!closed) {
                    if (reserve(bytes)) {
                        return true;
                    }
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        return false;
                    }
                    room.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                }
                return false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            } finally {
                waiting--;
            }
        }
    }

    /**
     * Completes a request taken by a worker. Its room is released first, so a caller that produces
     * again from its completion callback finds the room it just freed.
     */
    void succeed(Request r, Produced produced) {
        release(1, r.bytes());
        r.future().complete(produced);
    }

    /** Completes a whole batch in order (one release for all of it); see {@link #succeed}. */
    void succeedAll(List<Request> batch, List<Produced> results) {
        long bytes = 0;
        for (Request r : batch) {
            bytes += r.bytes();
        }
        release(batch.size(), bytes);
        for (int i = 0; i < batch.size(); i++) {
            batch.get(i).future().complete(results.get(i));
        }
    }

    /** Fails a request taken by a worker, releasing its room first; see {@link #succeed}. */
    void fail(Request r, Throwable error) {
        release(1, r.bytes());
        r.future().completeExceptionally(error);
    }

    private void release(int messages, long bytes) {
        bufferedBytes.addAndGet(-bytes);
        bufferedMessages.addAndGet(-messages);
        if (waiting > 0) {
            synchronized (room) {
                room.notifyAll();
            }
        }
    }

    private SluiceException full() {
        return new SluiceException(ErrorCode.PRODUCER_BUFFER_FULL, "the producer's buffer is full ("
                + bufferedMessages.get() + " messages, " + bufferedBytes.get() + " bytes not yet written; bounds "
                + bounds.maxMessages() + " messages, " + bounds.maxBytes() + " bytes)");
    }

    private static SluiceException closedError() {
        return new SluiceException(ErrorCode.PRODUCER_CLOSED, "the producer is closed");
    }

    private void work() {
        List<Request> batch = new ArrayList<>(Math.min(maxBatchSize, 64));
        try {
            while (true) {
                Request first = queue.poll(100, TimeUnit.MILLISECONDS);
                if (first == null) {
                    if (closed && queue.isEmpty()) {
                        return;
                    }
                    continue;
                }
                batch.add(first);
                queue.drainTo(batch, maxBatchSize - 1);
                try {
                    flush.accept(batch);
                } catch (RuntimeException e) {
                    for (Request r : batch) {
                        if (!r.future().isDone()) {
                            fail(r, e);
                        }
                    }
                }
                batch = new ArrayList<>(Math.min(maxBatchSize, 64));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops admitting, lets queued messages go out for up to {@code timeout}, then fails the rest. */
    void close(Duration timeout) {
        synchronized (admission) {
            closed = true;
        }
        synchronized (room) {
            room.notifyAll();
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        for (Thread t : workers) {
            try {
                t.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        for (Thread t : workers) {
            t.interrupt();
        }
        Request r;
        while ((r = queue.poll()) != null) {
            release(1, r.bytes());
            r.future().completeExceptionally(new SluiceException(ErrorCode.PRODUCER_CLOSED,
                    "the producer closed before this message was sent"));
        }
    }
}
