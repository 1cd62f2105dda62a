package dev.sluice.server.pull;

import dev.sluice.ConsumeOptions;
import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.Message;
import dev.sluice.Outcome;
import dev.sluice.internal.consume.AsyncHandler;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * HTTP pull consumption of one group in this server: an ordinary consumption of the group whose handler
 * hands each message to whichever HTTP claim takes it; its outcome is the one the claim gives back. The handler is
 * an {@link AsyncHandler}: in a {@code parallel} group no thread waits per message out (the ranges record each
 * outcome when it arrives); the keyed policies' chains and retried rows wait on the bridge's handler threads. So every
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
    /** Signalled when the ready queue stops being empty (claims waiting for their first message). */
    private final Condition available = lock.newCondition();
    /** Signalled when the ready queue holds what the gathering claim wants. */
    private final Condition filled = lock.newCondition();
    /** The least that a gathering claim wants (Integer.MAX_VALUE while none gathers); under the lock. */
    private int gatherTarget = Integer.MAX_VALUE;
    /** Claims gathering now; under the lock. */
    private int gathering;
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
        consumption = group.consume((AsyncHandler<byte[]>) this::handle, o);
    }

    /** The consumption's handler: queues the message for a claim; the stage completes with the outcome a claim gives. */
    private CompletableFuture<Outcome> handle(Message<byte[]> m) {
        Pending p = new Pending(m);
        lock.lock();
        try {
            if (stopped) {
                // never recorded: the consumption released its work before stopped was set
                return CompletableFuture.completedFuture(Outcome.retry());
            }
            ready.addLast(p);
            // Wake-ups only when they change something: the first message for a waiting claim, or enough
            // for the gathering one. A signal per message would wake the gathering claim once per message.
            if (ready.size() == 1) {
                available.signal();
            } else if (ready.size() >= gatherTarget) {
                filled.signal();
            }
        } finally {
            lock.unlock();
        }
        return p.outcome;
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
            gatherTarget = Math.min(gatherTarget, max);
            gathering++;
            try {
                while (!ready.isEmpty() && ready.size() < max && !stopped) {
                    long until = gatherEnd - System.nanoTime();
                    if (until <= 0) {
                        break;
                    }
                    filled.awaitNanos(Math.min(until, GAP_NANOS));
                    if (ready.size() == seen) {
                        break; // nothing new during a gap
                    }
                    seen = ready.size();
                }
            } finally {
                if (--gathering == 0) {
                    gatherTarget = Integer.MAX_VALUE;
                }
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
     * exception rows), then every message out is let go (its outcome is ignored: the work was released).
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
            filled.signalAll();
        } finally {
            lock.unlock();
        }
        for (Pending p : left) {
            p.outcome.complete(Outcome.retry());
        }
    }
}
