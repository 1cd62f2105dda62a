package dev.sluice.server.pull;

import dev.sluice.ConsumeOptions;
import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.Message;
import dev.sluice.Outcome;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * HTTP pull consumption of one group in this server: an ordinary consumption of the group whose handler
 * hands each message to whichever HTTP claim takes it and blocks until its outcome comes back. So every
 * rule of the library holds over HTTP unchanged: range claims and leases (renewed while messages are out),
 * retries and dead letters, and the per-key rules of exclusive and ordered groups (the next message of a key
 * is handed out only after the previous one's outcome). Started on the first claim request, stopped after
 * {@link PullOptions#idleStop()} without demand; stopping releases what no claim holds (not counted as an
 * attempt) and the engine ignores outcomes that arrive after it released their messages.
 */
final class GroupBridge {
    private final ConsumerGroup<byte[]> group;
    /** How long at most a claim gathers further messages after its first arrived. */
    private static final long GATHER_NANOS = 50_000_000L;
    /** A gap without a new message that ends the gathering. */
    private static final long GAP_NANOS = 3_000_000L;
    private final PullOptions options;
    private final Executor handlers;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition available = lock.newCondition();
    /** Delivered by the consumption, not taken by a claim yet. */
    private final ArrayDeque<Pending> ready = new ArrayDeque<>();
    private Consumption consumption;
    private boolean stopped;
    private volatile long lastDemandNanos = System.nanoTime();

    GroupBridge(ConsumerGroup<byte[]> group, PullOptions options, Executor handlers) {
        this.group = group;
        this.options = options;
        this.handlers = handlers;
    }

    String streamName() {
        return group.stream().name();
    }

    String groupName() {
        return group.name();
    }

    /** Starts the consumption (throws the library's coded error, e.g. an unknown group). */
    void start() {
        ConsumeOptions o = ConsumeOptions.defaults().withBatchSize(options.batchSize()).withConcurrency(options.concurrency())
                .withExecutor(handlers).withShutdownTimeout(Duration.ZERO);
        consumption = group.consume(this::handle, o);
    }

    private Outcome handle(Message<byte[]> m) throws InterruptedException {
        Pending p = new Pending(m);
        lock.lock();
        try {
            if (stopped) {
                return Outcome.retry(); // never recorded: the consumption released its work before stopped was set
            }
            ready.addLast(p);
            available.signal();
        } finally {
            lock.unlock();
        }
        try {
            return p.outcome.get();
        } catch (ExecutionException e) {
            return Outcome.retry();
        }
    }

    /**
     * Takes up to {@code max} messages, waiting up to {@code waitNanos} for the first; an empty list when none
     * came (or the bridge stopped).
     */
    List<Pending> take(int max, long waitNanos) throws InterruptedException {
        lastDemandNanos = System.nanoTime();
        List<Pending> out = new ArrayList<>();
        lock.lock();
        try {
            long left = waitNanos;
            while (ready.isEmpty() && !stopped && left > 0) {
                left = available.awaitNanos(left);
            }
            // The consumption hands a claimed range over message by message: once the first is here, gather what
            // follows while it keeps coming (a gap of GAP_NANOS ends it, GATHER_NANOS at most), so that a claim gets a
            // batch, not a trickle, and a lone message is not held back.
            long gatherEnd = System.nanoTime() + Math.min(left, GATHER_NANOS);
            int seen = ready.size();
            while (!ready.isEmpty() && ready.size() < max && !stopped) {
                long until = gatherEnd - System.nanoTime();
                if (until <= 0) {
                    break;
                }
                available.awaitNanos(Math.min(until, GAP_NANOS));
                if (ready.size() == seen) {
                    break; // nothing new during a gap
                }
                seen = ready.size();
            }
            while (!ready.isEmpty() && out.size() < max) {
                out.add(ready.pollFirst());
            }
            if (!ready.isEmpty()) {
                available.signal(); // more for the next waiter
            }
        } finally {
            lock.unlock();
        }
        lastDemandNanos = System.nanoTime();
        return out;
    }

    /** Whether nobody asked for messages during the last {@code idleNanos}. */
    boolean idle(long now, long idleNanos) {
        return now - lastDemandNanos > idleNanos;
    }

    /** Messages delivered to the bridge that no claim took yet. */
    int readyCount() {
        lock.lock();
        try {
            return ready.size();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Stops: the consumption gives back everything without an outcome at once (ranges with what is resolved,
     * exception rows), then every blocked handler call is let go (its outcome is ignored: the work was released).
     */
    void stop() {
        Consumption c = consumption;
        if (c != null) {
            c.close();
        }
        List<Pending> left;
        lock.lock();
        try {
            stopped = true;
            left = new ArrayList<>(ready);
            ready.clear();
            available.signalAll();
        } finally {
            lock.unlock();
        }
        for (Pending p : left) {
            p.outcome.complete(Outcome.retry());
        }
    }
}
