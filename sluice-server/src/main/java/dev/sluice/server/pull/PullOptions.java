package dev.sluice.server.pull;

import java.time.Duration;

/**
 * Bounds of HTTP pull consumption in one server.
 *
 * @param concurrency   messages of one group out at once (handed to claims or waiting for one)
 * @param batchSize     ids one range claim of the group's consumption takes
 * @param maxGroups     groups consumed over HTTP at once (each one consumption)
 * @param maxWaiters    claim requests waiting at once (long-polls); past it a claim is answered 429
 * @param maxWait       longest long-poll a claim may ask for
 * @param defaultLease  a claim's lease when the request names none
 * @param maxLease      longest lease a claim or renewal may ask for
 * @param idleStop      a group's consumption stops after this long without claim requests and claims
 */
public record PullOptions(int concurrency, int batchSize, int maxGroups, int maxWaiters, Duration maxWait, Duration defaultLease,
                          Duration maxLease, Duration idleStop) {
    /**
     * 1,024 messages out per group (each a parked handler thread with a small stack: enough for 8 clients claiming
     * 100 at a time with room for the next ranges), batches of 100, 64 groups, 256 waiters, 30 s waits, 30 s leases
     * (at most 15 min), 30 s idle stop.
     */
    public static PullOptions defaults() {
        return new PullOptions(1024, 500, 64, 256, Duration.ofSeconds(30), Duration.ofSeconds(30), Duration.ofMinutes(15),
                Duration.ofSeconds(30));
    }

    /** The same with another idle stop (tests). */
    public PullOptions withIdleStop(Duration d) {
        return new PullOptions(concurrency, batchSize, maxGroups, maxWaiters, maxWait, defaultLease, maxLease, d);
    }
}
