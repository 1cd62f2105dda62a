package dev.sluice.internal.consume;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** The in-memory state of one claimed range while its messages run. */
final class RangeWork {
    final long leaseId;
    final long low;
    final long high;
    final int reclaims;
    /**
     * Ids that need nothing more: successes and skips (and what earlier holders recorded). Renewal
     * writes this set to the lease, so it must never hold an id whose outcome row exists only in
     * memory: a takeover after a crash re-runs everything not in it, and ordered consumers elsewhere
     * treat ids not in it as unresolved predecessors.
     */
    final Set<Long> resolved = ConcurrentHashMap.newKeySet();
    /** Outcome rows (retry, dead, deferred, scheduled) to write with the range's completion. */
    final List<OutcomeRow> rows = new ArrayList<>();
    /** Delivery-log events to write with the completion. */
    final List<LogEvent> events = new ArrayList<>();
    /** Keys whose lease this range holds (exclusive/ordered). */
    final Set<String> keys = ConcurrentHashMap.newKeySet();
    final AtomicInteger remaining = new AtomicInteger();
    volatile boolean lost;
    volatile boolean done;

    RangeWork(long leaseId, long low, long high, int reclaims, Set<Long> resolvedBefore) {
        this.leaseId = leaseId;
        this.low = low;
        this.high = high;
        this.reclaims = reclaims;
        this.resolved.addAll(resolvedBefore);
    }

    synchronized void addRow(OutcomeRow row) {
        rows.add(row);
    }

    /** Resolved ids plus the ids whose rows are written in the same transaction (release). */
    synchronized Set<Long> resolvedWithRows() {
        Set<Long> all = new java.util.HashSet<>(resolved);
        rows.forEach(r -> all.add(r.id()));
        return all;
    }

    synchronized void addEvent(LogEvent e) {
        events.add(e);
    }

    synchronized List<OutcomeRow> rowsSnapshot() {
        return List.copyOf(rows);
    }

    synchronized List<LogEvent> eventsSnapshot() {
        return List.copyOf(events);
    }

    /** An exception-queue row produced by an outcome. */
    record OutcomeRow(long id, RowStatus status, String messageKey, int attempts, int delays, double afterSeconds,
                      String error, String stack) {
    }

    /** A delivery-log event. */
    record LogEvent(long id, int attempt, DeliveryEvent status, String error) {
    }
}
