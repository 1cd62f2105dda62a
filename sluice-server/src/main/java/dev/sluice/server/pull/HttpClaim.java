package dev.sluice.server.pull;

import dev.sluice.Outcome;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Messages handed to one HTTP client under one claim id, until their outcomes arrive or the claim's lease
 * ends (then each message without an outcome is a retry: delivered again, its attempt counted, as when a
 * handler outlives its lease in the library).
 */
final class HttpClaim {
    final String id;
    final GroupBridge bridge;
    /** By message id, in delivery order; an entry leaves when its outcome is given. */
    private final Map<Long, Pending> open = new LinkedHashMap<>();
    private final long leaseNanos;
    private long deadlineNanos;
    private boolean ended;

    HttpClaim(String id, GroupBridge bridge, List<Pending> messages, long leaseNanos) {
        this.id = id;
        this.bridge = bridge;
        this.leaseNanos = leaseNanos;
        for (Pending p : messages) {
            open.put(p.id(), p);
        }
        this.deadlineNanos = System.nanoTime() + leaseNanos;
    }

    /** The lease's end on the nano clock. */
    synchronized long deadlineNanos() {
        return deadlineNanos;
    }

    /** The claim's lease length. */
    long leaseNanos() {
        return leaseNanos;
    }

    /** Whether the claim still holds messages and its lease has not ended at {@code now}. */
    synchronized boolean live(long now) {
        return !ended && now - deadlineNanos < 0;
    }

    /** Extends the lease by {@code nanos} from now; false when the claim is no longer live. */
    synchronized boolean renew(long nanos) {
        long now = System.nanoTime();
        if (!live(now)) {
            return false;
        }
        deadlineNanos = now + nanos;
        return true;
    }

    /**
     * Records outcomes; returns the ids that were not open in this claim (unknown, or resolved before). Null
     * when the claim is no longer live (nothing recorded).
     */
    List<Long> resolve(Map<Long, Outcome> outcomes) {
        List<Long> unknown = new ArrayList<>();
        List<Pending> given = new ArrayList<>(outcomes.size());
        synchronized (this) {
            if (!live(System.nanoTime())) {
                return null;
            }
            for (Long id : outcomes.keySet()) {
                Pending p = open.remove(id);
                if (p == null) {
                    unknown.add(id);
                } else {
                    given.add(p);
                }
            }
            if (open.isEmpty()) {
                ended = true;
            }
        }
        // Outside the claim's monitor: completing an outcome records it in its range, and the last one of a range
        // completes the range (a transaction) on this thread.
        for (Pending p : given) {
            p.outcome.complete(outcomes.get(p.id()));
        }
        return unknown;
    }

    /** Ends the claim: every message still open gets {@code outcome}; returns how many did. */
    int end(Outcome outcome) {
        List<Pending> left;
        synchronized (this) {
            ended = true;
            left = new ArrayList<>(open.values());
            open.clear();
        }
        int n = 0;
        for (Pending p : left) {
            if (p.outcome.complete(outcome)) {
                n++;
            }
        }
        return n;
    }

    /** Whether every message has its outcome (or the claim ended). */
    synchronized boolean ended() {
        return ended;
    }

    /** Messages still without an outcome. */
    synchronized int openCount() {
        return open.size();
    }
}
