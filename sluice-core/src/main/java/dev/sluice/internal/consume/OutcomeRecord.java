package dev.sluice.internal.consume;

import dev.sluice.DeliveryLogMode;
import dev.sluice.Outcome;
import dev.sluice.internal.consume.RangeWork.LogEvent;
import dev.sluice.internal.consume.RangeWork.OutcomeRow;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What a unit of claimed work (a range, a bucket batch) collects while its messages run: the ids that need nothing more,
 * and the outcome rows and delivery events its completion writes. Also the one delivery of a message of such work
 * ({@link #runOne}), shared by both runners.
 */
abstract class OutcomeRecord {
    /**
     * Ids that need nothing more: successes and skips (and, for a range, what earlier holders recorded). A range's
     * renewal writes this set to its lease, so it never holds an id whose outcome row exists only in memory.
     */
    final Set<Long> resolved = ConcurrentHashMap.newKeySet();
    /**
     * Ids whose handler was started here. One started but neither resolved nor given a row when the work is given back
     * at a clean stop was delivered without an outcome: its next delivery is a redelivery and counts an attempt.
     */
    final Set<Long> started = ConcurrentHashMap.newKeySet();
    /** Outcome rows (retry, dead, deferred, scheduled) to write with the completion. */
    private final List<OutcomeRow> rows = new ArrayList<>();
    /** Delivery-log events to write with the completion. */
    private final List<LogEvent> events = new ArrayList<>();

    synchronized void addRow(OutcomeRow row) {
        rows.add(row);
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

    /** Logs an event when the group's delivery-log mode records it. */
    void event(ConsumerContext ctx, long id, int attempt, DeliveryEvent e, String error) {
        if (e.loggedUnder(ctx.logMode)) {
            addEvent(new LogEvent(id, attempt, e, error));
        }
    }

    /** Delivers one message at {@code attempt} and records its outcome here. Returns the row status written, null for success. */
    <T> RowStatus runOne(ConsumerContext ctx, Delivery<T> delivery, Outcomes outcomes, Fetched f, int attempt) {
        started.add(f.id());
        return record(ctx, outcomes, f, delivery.deliver(f, attempt, 0), attempt);
    }

    /** Resolved ids plus the ids that have an outcome row here (written in the same transaction). */
    synchronized Set<Long> resolvedWithRows() {
        Set<Long> all = new java.util.HashSet<>(resolved);
        rows.forEach(r -> all.add(r.id()));
        return all;
    }

    /** Whether a handler started here has no outcome yet (neither resolved nor given a row). */
    boolean anyUnfinished() {
        return !started.isEmpty() && !resolvedWithRows().containsAll(started);
    }

    /** Records the outcome of one delivery of a message of this work. Returns the row status written, null for success. */
    RowStatus record(ConsumerContext ctx, Outcomes outcomes, Fetched f, Outcome out, int attempt) {
        Outcomes.Decision d = outcomes.decide(f.id(), f.messageKey(), out, attempt, 0);
        ctx.stats.count(d.kind());
        if (d.success()) {
            resolved.add(f.id());
            if (ctx.logMode == DeliveryLogMode.ALL) {
                event(ctx, f.id(), attempt, DeliveryEvent.SUCCESS, null);
            }
            return null;
        }
        addRow(d.row());
        if (ctx.logMode != DeliveryLogMode.OFF) {
            event(ctx, f.id(), attempt, d.event(), d.row().error());
        }
        return d.row().status();
    }
}
