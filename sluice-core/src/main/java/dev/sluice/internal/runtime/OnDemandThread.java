package dev.sluice.internal.runtime;

import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;

/**
 * One daemon thread of a client that starts with its first task, not before (the client's maintenance thread: log
 * partitions made ahead of producers). After {@link #shutdown()} it refuses tasks.
 */
public final class OnDemandThread implements Executor {
    private final String name;
    private ExecutorService executor;
    private boolean shut;

    /** A thread named {@code name}, not started. */
    public OnDemandThread(String name) {
        this.name = name;
    }

    /** Runs {@code task} on the thread (started now if it was not). */
    @Override
    public void execute(Runnable task) {
        ExecutorService e;
        synchronized (this) {
            if (shut) {
                throw new RejectedExecutionException(name + " is shut down");
            }
            if (executor == null) {
                executor = Executors.newSingleThreadExecutor(r -> {
                    Thread t = new Thread(r, name);
                    t.setDaemon(true);
                    return t;
                });
            }
            e = executor;
        }
        e.execute(task);
    }

    /** Lets the task in progress and those queued finish, then the thread ends; later tasks are refused. */
    public synchronized void shutdown() {
        shut = true;
        if (executor != null) {
            executor.shutdown();
        }
    }
}
