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
import java.util.function.Consumer;

/**
 * The commit-driven batcher: concurrent produce calls queue up while up to {@code maxInFlight} batch
 * transactions run; when one finishes, everything queued (up to {@code maxBatchSize}) becomes the next
 * batch. There is no linger timer: at light load a message goes alone and at once, under load batches
 * grow by themselves. Each request keeps its own future.
 */
final class Batcher {
    /** One queued message and its caller's future. */
    record Request(Encoded message, CompletableFuture<Produced> future) {
    }

    private final LinkedBlockingQueue<Request> queue = new LinkedBlockingQueue<>();
    private final int maxBatchSize;
    private final Thread[] workers;
    private final Consumer<List<Request>> flush;
    private final Object admission = new Object();
    private volatile boolean closed;

    Batcher(String name, int maxBatchSize, int maxInFlight, Consumer<List<Request>> flush) {
        this.maxBatchSize = maxBatchSize;
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

    /** Queues a message; fails the future at once when the batcher is closed. */
    CompletableFuture<Produced> submit(Encoded message) {
        CompletableFuture<Produced> f = new CompletableFuture<>();
        synchronized (admission) {
            if (closed) {
                f.completeExceptionally(new SluiceException(ErrorCode.PRODUCER_CLOSED, "the producer is closed"));
                return f;
            }
            queue.add(new Request(message, f));
        }
        return f;
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
                    batch.forEach(r -> r.future().completeExceptionally(e));
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
            r.future().completeExceptionally(new SluiceException(ErrorCode.PRODUCER_CLOSED,
                    "the producer closed before this message was sent"));
        }
    }
}
