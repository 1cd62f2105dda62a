package dev.sluice.internal.runtime;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.ToLongFunction;

/**
 * The threads of one client, shared by all its consumers and workers and sized by configuration, never by
 * the number of groups or queues: a scheduler that runs every {@link PollLoop} and periodic task (lease
 * renewal, retries of busy keys), and a handler executor that runs the user's handlers. Threads are daemons,
 * created on demand and, for handlers, retired after a minute idle — a client with 1,000 idle groups runs the
 * scheduler's threads and nothing else.
 *
 * <p>A consumer still bounds its own in-flight work (its {@code concurrency}); the handler executor's queue
 * therefore holds at most the sum of those bounds.
 */
public final class ClientRuntime implements AutoCloseable {
    /** Default scheduler threads: the polls are short database round trips. */
    public static final int DEFAULT_SCHEDULER_THREADS = 4;
    /** Default handler threads shared by every consumption and worker of the client without an executor of its own. */
    public static final int DEFAULT_HANDLER_THREADS = 64;

    private final ScheduledThreadPoolExecutor scheduler;
    private final ThreadPoolExecutor handlers;

    public ClientRuntime(String name, int schedulerThreads, int handlerThreads) {
        if (schedulerThreads < 1 || handlerThreads < 1) {
            throw new IllegalArgumentException("runtime threads must be at least 1 (scheduler " + schedulerThreads
                    + ", handlers " + handlerThreads + ")");
        }
        this.scheduler = new ScheduledThreadPoolExecutor(schedulerThreads, daemons("sluice-runtime-" + name));
        this.scheduler.setRemoveOnCancelPolicy(true); // a woken loop's cancelled wait leaves the queue at once
        this.scheduler.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        this.handlers = new ThreadPoolExecutor(handlerThreads, handlerThreads, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                daemons("sluice-handler-" + name));
        this.handlers.allowCoreThreadTimeOut(true);
    }

    private static ThreadFactory daemons(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    public ScheduledExecutorService scheduler() {
        return scheduler;
    }

    public ExecutorService handlers() {
        return handlers;
    }

    /** A loop on this runtime's scheduler (not started). */
    public PollLoop loop(String name, PollLoop.Poll poll, ToLongFunction<Exception> maxBackoffMillis) {
        return new PollLoop(name, scheduler, poll, maxBackoffMillis);
    }

    /** Stops both pools; waits up to 10 s for running tasks (parts are closed before the runtime). */
    @Override
    public void close() {
        scheduler.shutdown();
        handlers.shutdown();
        try {
            scheduler.awaitTermination(10, TimeUnit.SECONDS);
            handlers.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        scheduler.shutdownNow();
        handlers.shutdownNow();
    }
}
