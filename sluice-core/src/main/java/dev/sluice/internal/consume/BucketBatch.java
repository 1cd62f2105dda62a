package dev.sluice.internal.consume;

import dev.sluice.internal.consume.RangeWork.OutcomeRow;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One bucket's claimed batch while it runs: the messages of the bucket in {@code (low, high]} (everything of the
 * bucket in that window; a bucket has one open batch at a time, so batches of a bucket run one after another), the
 * ids resolved so far, the outcome rows and events its commit writes, and the keys whose deferred rows the commit
 * must wake.
 */
final class BucketBatch extends OutcomeRecord {
    final int bucket;
    /** The bucket's position when the batch was claimed: every message of the bucket at or below is resolved. */
    final long low;
    /** Where the bucket's position goes when the batch commits. */
    final long high;
    final List<Fetched> messages;
    /** Messages whose key had an unresolved exception row below them when claimed: deferred, never run here. */
    final Set<Long> blocked;
    /** Keys with a row deferred because the key was running here: woken at the commit. */
    final Set<String> wake = ConcurrentHashMap.newKeySet();
    final AtomicInteger remaining = new AtomicInteger();
    /**
     * The batches claimed together with this one, still running (shared by them): the last to finish commits them all
     * in one transaction; one that finishes earlier waits for it at most {@link BucketRunner#HOLD_NANOS}.
     */
    final AtomicInteger wave;
    /** Set when the batch was committed, given back, or refused: nothing more is written for it. */
    volatile boolean done;
    /** Set when the bucket was lost: the rest of the batch is not run (its outcome would be refused). */
    volatile boolean lost;
    /** Set (on the loop thread that starts the batch) when a message of it was quarantined; for the log line. */
    boolean quarantined;

    /** The bucket's hand-outs from {@link #low} before this one that never committed (a crash, a lost lease). */
    final PartitionClaims.Runs runs;

    BucketBatch(int bucket, long low, long high, List<Fetched> messages, Set<Long> blocked, AtomicInteger wave,
                PartitionClaims.Runs runs) {
        this.wave = wave;
        this.runs = runs;
        this.bucket = bucket;
        this.low = low;
        this.high = high;
        this.messages = messages;
        this.blocked = blocked;
    }

    /**
     * A clean stop before the batch finished: every message neither resolved nor given a row becomes a
     * {@code ready} row due now, so the position can still move to {@link #high} — nothing completed runs again, and
     * what did not finish runs as a row, in key order. A message whose handler was started here keeps that delivery
     * counted (its next one is a redelivery); one never started does not spend an attempt.
     */
    synchronized List<OutcomeRow> rowsWithUnfinished() {
        Set<Long> written = resolvedWithRows();
        List<OutcomeRow> all = new ArrayList<>(rowsSnapshot());
        for (Fetched f : messages) {
            if (!written.contains(f.id())) {
                int delivered = runs.attempt(f.id()) - (started.contains(f.id()) ? 0 : 1);
                all.add(new OutcomeRow(f.id(), RowStatus.READY, f.messageKey(), delivered, 0, 0, null, null));
            }
        }
        return all;
    }

    @Override
    public String toString() {
        return "bucket " + bucket + " (" + low + ", " + high + "]";
    }
}
