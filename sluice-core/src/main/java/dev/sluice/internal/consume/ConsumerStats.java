package dev.sluice.internal.consume;

import dev.sluice.ConsumptionStats;
import dev.sluice.internal.metrics.DeliveryMeters;
import dev.sluice.internal.metrics.DeliveryOutcome;
import java.util.concurrent.atomic.LongAdder;

/**
 * The counters of one running consumption ({@link GroupConsumer#stats()}), and its group's meters (looked up once, when
 * the consumption is built; no-ops without a registry).
 */
final class ConsumerStats {
    final DeliveryMeters meters;
    final LongAdder delivered = new LongAdder();
    final LongAdder succeeded = new LongAdder();
    final LongAdder retried = new LongAdder();
    final LongAdder dead = new LongAdder();
    final LongAdder delayed = new LongAdder();
    final LongAdder deferred = new LongAdder();
    final LongAdder handedOn = new LongAdder();
    final LongAdder skippedSuperseded = new LongAdder();
    final LongAdder skippedVersion = new LongAdder();
    final LongAdder skippedFiltered = new LongAdder();
    final LongAdder rangesClaimed = new LongAdder();
    final LongAdder rangesReclaimed = new LongAdder();
    final LongAdder leasesLost = new LongAdder();

    ConsumerStats(DeliveryMeters meters) {
        this.meters = meters;
    }

    /** Counts an outcome by its kind (here and in {@code sluice.deliveries}). */
    void count(Outcomes.Kind kind) {
        switch (kind) {
            case SUCCEEDED -> {
                succeeded.increment();
                meters.count(DeliveryOutcome.SUCCESS);
            }
            case DELAYED -> {
                delayed.increment();
                meters.count(DeliveryOutcome.DELAY);
            }
            case RETRIED -> {
                retried.increment();
                meters.count(DeliveryOutcome.RETRY);
            }
            case DEAD -> {
                dead.increment();
                meters.count(DeliveryOutcome.TERMINAL);
            }
        }
    }

    ConsumptionStats snapshot() {
        return new ConsumptionStats(delivered.sum(), succeeded.sum(), retried.sum(), dead.sum(), delayed.sum(), deferred.sum(),
                skippedSuperseded.sum(), skippedVersion.sum(), skippedFiltered.sum(), rangesClaimed.sum(),
                rangesReclaimed.sum(), leasesLost.sum(), handedOn.sum());
    }
}
