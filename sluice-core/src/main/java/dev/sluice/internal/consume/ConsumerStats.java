package dev.sluice.internal.consume;

import dev.sluice.ConsumptionStats;
import java.util.concurrent.atomic.LongAdder;

/** The counters of one running consumption ({@link GroupConsumer#stats()}). */
final class ConsumerStats {
    final LongAdder delivered = new LongAdder();
    final LongAdder succeeded = new LongAdder();
    final LongAdder retried = new LongAdder();
    final LongAdder dead = new LongAdder();
    final LongAdder delayed = new LongAdder();
    final LongAdder deferred = new LongAdder();
    final LongAdder skippedSuperseded = new LongAdder();
    final LongAdder skippedVersion = new LongAdder();
    final LongAdder skippedFiltered = new LongAdder();
    final LongAdder rangesClaimed = new LongAdder();
    final LongAdder rangesReclaimed = new LongAdder();
    final LongAdder leasesLost = new LongAdder();

    /** Counts an outcome by its kind. */
    void count(Outcomes.Kind kind) {
        switch (kind) {
            case SUCCEEDED -> succeeded.increment();
            case DELAYED -> delayed.increment();
            case RETRIED -> retried.increment();
            case DEAD -> dead.increment();
        }
    }

    ConsumptionStats snapshot() {
        return new ConsumptionStats(delivered.sum(), succeeded.sum(), retried.sum(), dead.sum(), delayed.sum(), deferred.sum(),
                skippedSuperseded.sum(), skippedVersion.sum(), skippedFiltered.sum(), rangesClaimed.sum(),
                rangesReclaimed.sum(), leasesLost.sum());
    }
}
