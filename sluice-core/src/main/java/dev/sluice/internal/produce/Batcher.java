package dev.sluice.internal.produce;

import dev.sluice.ErrorCode;
import dev.sluice.Produced;
import dev.sluice.SluiceException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
    private final Semaphore slots;
    private final int maxBatchSize;
    private final ExecutorService workers;
    private final Thread dispatcher;
    private final Consumer<List<Request>> flush;
    private final Object admission = new Object();
    private volatile boolean closed;

    Batcher(String name, int maxBatchSize, int maxInFlight, Consumer<List<Request>> flush) {
        this.maxBatchSize = maxBatchSize;
        this.slots = new Semaphore(maxInFlight);
        this.flush = flush;
        AtomicInteger n = new AtomicInteger();
        this.workers = Executors.newFixedThreadPool(maxInFlight, r -> {
            Thread t = new Thread(r, "sluice-produce-" + name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        this.dispatcher = new Thread(this::dispatch, "sluice-batcher-" + name);
        this.dispatcher.setDaemon(true);
        this.dispatcher.start();
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

    private void dispatch() {
        try {
            while (true) {
                Request first = queue.poll(100, TimeUnit.MILLISECONDS);
                if (first == null) {
                    if (closed && queue.isEmpty()) {
                        return;
                    }
                    continue;
                }
                slots.acquire();
                List<Request> batch = new ArrayList<>(Math.min(maxBatchSize, queue.size() + 1));
                batch.add(first);
                queue.drainTo(batch, maxBatchSize - 1);
                try {
                    workers.execute(() -> {
                        try {
                            flush.accept(batch);
                        } catch (RuntimeException e) {
                            batch.forEach(r -> r.future().completeExceptionally(e));
                        } finally {
                            slots.release();
                        }
                    });
                } catch (RuntimeException e) {
                    slots.release();
                    batch.forEach(r -> r.future().completeExceptionally(e));
                }
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
        try {
            dispatcher.join(Math.max(1, timeout.toMillis()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        dispatcher.interrupt();
        workers.shutdown();
        try {
            workers.awaitTermination(Math.max(1, timeout.toMillis()), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Request r;
        while ((r = queue.poll()) != null) {
            r.future().completeExceptionally(new SluiceException(ErrorCode.PRODUCER_CLOSED,
                    "the producer closed before this message was sent"));
        }
    }
}
