package dev.sluice.internal.consume;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Renews this consumer's leases every third of the lease, all in one transaction: its open ranges (with their
 * resolved ids; a range not renewed is marked lost), its rows in flight, and its key leases.
 */
final class LeaseRenewal {
    private final ConsumerContext ctx;
    private final Map<Long, RangeWork> ranges;
    private final Set<Long> rows;
    private final RangeClaims claims;
    private final ExceptionQueue<?> queue;
    private final KeyLeases keys;
    private long lastRenewal;
    /** Tests only: true stops renewals, so that leases expire under a live consumer. */
    private final BooleanSupplier suspended;

    LeaseRenewal(ConsumerContext ctx, Map<Long, RangeWork> ranges, RangeClaims claims, ExceptionQueue<?> queue, KeyLeases keys,
                 BooleanSupplier suspended) {
        this.ctx = ctx;
        this.suspended = suspended;
        this.ranges = ranges;
        this.rows = queue.inFlight.keySet();
        this.claims = claims;
        this.queue = queue;
        this.keys = keys;
    }

    /** One renewal (the ticker's task); failures are logged and retried at the next tick. */
    void renew() {
        if (suspended.getAsBoolean()) {
            return;
        }
        try {
            List<RangeWork> open = new ArrayList<>(ranges.values());
            Set<Long> rowIds = new HashSet<>(rows);
            if (open.isEmpty() && rowIds.isEmpty()) {
                lastRenewal = System.nanoTime();
                return;
            }
            long started = System.nanoTime();
            if (lastRenewal != 0 && started - lastRenewal > ctx.o.leaseTimeout().toNanos() / 2) {
                // Renewals run every third of the lease: one this late means the process is starved (CPU, GC
                // pauses, a pool without free connections) and its leases are at risk of expiring under it.
                ConsumerContext.log.warn("lease renewal is late: group={} {} ms since the last one (lease {} ms)",
                        ctx.g.groupName(), TimeUnit.NANOSECONDS.toMillis(started - lastRenewal), ctx.o.leaseTimeout().toMillis());
            }
            Set<Long> renewedRanges = ctx.db.transaction("renew leases", c -> {
                Set<Long> renewed = Set.of();
                if (!open.isEmpty()) {
                    renewed = claims.renew(c, open);
                    for (RangeWork w : open) {
                        if (!renewed.contains(w.leaseId)) {
                            w.lost = true;
                            ConsumerContext.log.debug("range lease lost at renewal: group={} low={} high={}",
                                    ctx.g.groupName(), w.low, w.high);
                        }
                    }
                }
                if (!rowIds.isEmpty()) {
                    queue.renew(c, rowIds);
                }
                keys.renew(c);
                return renewed;
            });
            // Committed: the renewed ranges hold until a lease after this renewal was sent, by this process's clock.
            for (RangeWork w : open) {
                if (renewedRanges.contains(w.leaseId)) {
                    w.heldUntilNanos = started + ctx.o.leaseTimeout().toNanos();
                }
            }
            lastRenewal = System.nanoTime();
        } catch (RuntimeException e) {
            ctx.warn("lease renewal failed", e);
        }
    }
}
