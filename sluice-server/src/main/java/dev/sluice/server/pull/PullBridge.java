package dev.sluice.server.pull;

import dev.sluice.ErrorCode;
import dev.sluice.Message;
import dev.sluice.Outcome;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * HTTP pull consumption for the whole server: the groups consumed over HTTP ({@link GroupBridge}), the
 * claims handed out, and one reaper thread that ends claims whose lease ran out (their open messages become
 * retries, so they are delivered again) and stops groups nobody pulls from. Threads: the reaper; a
 * {@code parallel} group's messages out hold none; the keyed policies' chains and retried rows hold one blocked
 * handler call each while out (bounded by {@link PullOptions#concurrency()} per group and
 * {@link PullOptions#maxGroups()} groups); nothing per idle group.
 */
public final class PullBridge implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PullBridge.class);

    /** What a claim request got: the claim id (null when no message came), its lease's end, its messages. */
    public record Claimed(String claim, Instant expiresAt, List<Message<byte[]>> messages) {
    }

    private final Sluice sluice;
    private final PullOptions options;
    private final Map<String, GroupBridge> groups = new ConcurrentHashMap<>();
    private final Map<String, HttpClaim> claims = new ConcurrentHashMap<>();
    private final Semaphore waiters;
    private final ExecutorService handlers;
    private final ScheduledExecutorService reaper;
    private volatile boolean closed;

    public PullBridge(Sluice sluice, PullOptions options) {
        this.sluice = sluice;
        this.options = options;
        this.waiters = new Semaphore(options.maxWaiters());
        AtomicInteger n = new AtomicInteger();
        // Threads are made as messages go out and end 30 s after their last one; the bound is the
        // consumptions' concurrency, so the pool itself needs none.
        this.handlers = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 30, TimeUnit.SECONDS, new SynchronousQueue<>(), r -> {
            Thread t = new Thread(null, r, "sluice-http-pull-" + n.incrementAndGet(), 256 * 1024);
            t.setDaemon(true);
            return t;
        });
        this.reaper = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "sluice-http-pull-reaper");
            t.setDaemon(true);
            return t;
        });
        reaper.scheduleWithFixedDelay(this::reap, 200, 200, TimeUnit.MILLISECONDS);
    }

    /** The bounds in force. */
    public PullOptions options() {
        return options;
    }

    /**
     * Claims up to {@code max} messages of a group, waiting up to {@code wait} for the first, under a lease of
     * {@code lease}. TOO_MANY_REQUESTS when the server's waits or groups are at their bounds.
     */
    public Claimed claim(String stream, String group, int max, Duration wait, Duration lease) {
        if (closed) {
            throw new SluiceException(ErrorCode.CLIENT_CLOSED, "the server is shutting down");
        }
        if (wait.compareTo(options.maxWait()) > 0) {
            throw new SluiceException(ErrorCode.MALFORMED_REQUEST, "wait must be at most " + options.maxWait());
        }
        if (lease.compareTo(Duration.ofSeconds(1)) < 0 || lease.compareTo(options.maxLease()) > 0) {
            throw new SluiceException(ErrorCode.MALFORMED_REQUEST, "lease must be between 1s and " + options.maxLease());
        }
        if (!waiters.tryAcquire()) {
            throw new SluiceException(ErrorCode.TOO_MANY_REQUESTS, "this server already has " + options.maxWaiters()
                    + " claim requests waiting");
        }
        try {
            GroupBridge bridge = bridge(stream, group);
            List<Pending> taken = bridge.take(max, wait.toNanos());
            if (taken.isEmpty()) {
                return new Claimed(null, null, List.of());
            }
            String id = UUID.randomUUID().toString();
            HttpClaim c = new HttpClaim(id, bridge, taken, lease.toNanos());
            claims.put(id, c);
            if (closed || !groups.containsValue(bridge)) {
                // The bridge stopped meanwhile: its work was released; the claim never existed.
                claims.remove(id);
                c.end(Outcome.retry());
                return new Claimed(null, null, List.of());
            }
            List<Message<byte[]>> messages = new ArrayList<>(taken.size());
            for (Pending p : taken) {
                messages.add(p.message);
            }
            return new Claimed(id, Instant.now().plus(lease), messages);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SluiceException(ErrorCode.CLIENT_CLOSED, "the claim request was interrupted");
        } finally {
            waiters.release();
        }
    }

    private GroupBridge bridge(String stream, String group) {
        Sluice.validateName("stream", stream);
        Sluice.validateName("group", group);
        String key = stream + '\u0000' + group;
        GroupBridge b = groups.get(key);
        if (b != null) {
            return b;
        }
        synchronized (groups) {
            b = groups.get(key);
            if (b != null) {
                return b;
            }
            if (groups.size() >= options.maxGroups()) {
                throw new SluiceException(ErrorCode.TOO_MANY_REQUESTS, "this server already consumes " + options.maxGroups()
                        + " groups over HTTP");
            }
            b = new GroupBridge(sluice.stream(stream).consumerGroup(group), options, handlers);
            b.start();
            groups.put(key, b);
            return b;
        }
    }

    /**
     * Records outcomes of a claim's messages; returns the ids the claim did not hold (unknown or already
     * resolved). CLAIM_EXPIRED when the claim is unknown or its lease ended (nothing recorded).
     */
    public List<Long> outcomes(String claim, Map<Long, Outcome> outcomes) {
        HttpClaim c = claims.get(claim);
        List<Long> unknown = c == null ? null : c.resolve(outcomes);
        if (unknown == null) {
            throw expired();
        }
        if (c.ended()) {
            claims.remove(claim, c);
        }
        return unknown;
    }

    /** Extends a claim's lease by {@code lease} from now (its own lease when null); CLAIM_EXPIRED when it ended. */
    public Instant renew(String claim, Duration lease) {
        HttpClaim c = claims.get(claim);
        long nanos = lease == null ? (c == null ? 0 : c.leaseNanos()) : lease.toNanos();
        if (lease != null && (lease.compareTo(Duration.ofSeconds(1)) < 0 || lease.compareTo(options.maxLease()) > 0)) {
            throw new SluiceException(ErrorCode.MALFORMED_REQUEST, "lease must be between 1s and " + options.maxLease());
        }
        if (c == null || !c.renew(nanos)) {
            throw expired();
        }
        return Instant.now().plusNanos(nanos);
    }

    private static SluiceException expired() {
        return new SluiceException(ErrorCode.CLAIM_EXPIRED, "the claim is unknown here or its lease has ended");
    }

    /** Claims live now (for the dashboard and tests). */
    public int liveClaims() {
        return claims.size();
    }

    /** Groups consumed over HTTP now. */
    public int activeGroups() {
        return groups.size();
    }

    private void reap() {
        try {
            long now = System.nanoTime();
            for (HttpClaim c : claims.values()) {
                if (!c.live(now)) {
                    claims.remove(c.id, c);
                    int n = c.end(Outcome.retry());
                    if (n > 0) {
                        log.info("an HTTP claim's lease ended with {} messages without an outcome; they are delivered again:"
                                + " stream={} group={}", n, c.bridge.streamName(), c.bridge.groupName());
                    }
                }
            }
            long idle = options.idleStop().toNanos();
            for (Map.Entry<String, GroupBridge> e : groups.entrySet()) {
                GroupBridge b = e.getValue();
                if (b.idle(now, idle) && claims.values().stream().noneMatch(c -> c.bridge == b)) {
                    synchronized (groups) {
                        groups.remove(e.getKey(), b);
                    }
                    b.stop();
                    // a claim that slipped in while it stopped holds released messages: it ends now (409 from here on)
                    claims.values().removeIf(c -> {
                        if (c.bridge != b) {
                            return false;
                        }
                        c.end(Outcome.retry());
                        return true;
                    });
                }
            }
        } catch (RuntimeException e) {
            log.warn("the HTTP pull reaper failed a round", e);
        }
    }

    /**
     * Stops: no new claims; waits up to {@code drain} for the claims out to get their outcomes; then every group's
     * consumption gives back what is still unresolved (delivered again, not counted as an attempt).
     */
    @Override
    public void close() {
        close(Duration.ofSeconds(5));
    }

    /** See {@link #close()}. */
    public void close(Duration drain) {
        if (closed) {
            return;
        }
        closed = true;
        long deadline = System.nanoTime() + drain.toNanos();
        while (!claims.isEmpty() && System.nanoTime() - deadline < 0) {
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
        reaper.shutdownNow();
        List<GroupBridge> all;
        synchronized (groups) {
            all = new ArrayList<>(groups.values());
            groups.clear();
        }
        for (GroupBridge b : all) {
            b.stop();
        }
        for (HttpClaim c : claims.values()) {
            c.end(Outcome.retry()); // released by the stop above: these outcomes are ignored
        }
        claims.clear();
        handlers.shutdown();
    }
}
