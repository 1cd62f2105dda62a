package dev.sluice.internal.consume;

import dev.sluice.DeliveryLogMode;
import dev.sluice.Outcome;
import dev.sluice.internal.consume.RangeWork.LogEvent;
import dev.sluice.internal.consume.RangeWork.OutcomeRow;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The exception queue side of the claim path ({@link ExceptionSql}): claims due rows (and rows whose lease
 * expired), runs each under its row lease (and its key lease for keyed policies), and writes its outcome; also
 * the outcome rows and delivery events a range writes with its completion, and the rows' release and renewal.
 */
final class ExceptionQueue<T> {
    /** A claimed row: the delivery it is now (attempts counted by the claim), its delays and deferrals. */
    record ClaimedRow(long id, int attempt, int delays, int deferrals) {
    }

    /**
     * An exception row's outcome: {@code status} null deletes the row (resolved); {@code event} null logs nothing.
     */
    record RowWrite(long id, RowStatus status, DeliveryEvent event, int attempts, int delays, double afterSeconds,
                    String error, String stack) {
        static RowWrite resolved(long id) {
            return new RowWrite(id, null, null, 0, 0, 0, null, null);
        }
    }

    private final ConsumerContext ctx;
    private final ExceptionSql sql;
    private final String claimRowsSql;
    private final Delivery<T> delivery;
    private final RowKeys keys;
    private final Outcomes outcomes;
    /** The rows this consumer runs now (their leases are renewed). */
    final Set<Long> inFlight = ConcurrentHashMap.newKeySet();
    /** A partitioned member: its bucket count and the buckets it owns now (rows of others are not claimed); else 0, null. */
    private final int partitions;
    private final java.util.function.Supplier<Integer[]> ownedBuckets;

    ExceptionQueue(ConsumerContext ctx, Delivery<T> delivery, KeyLeases keys, Outcomes outcomes) {
        this(ctx, delivery, keys, outcomes, 0, null);
    }

    /** The exception queue of a partitioned group's member, which claims only rows of the buckets it owns. */
    ExceptionQueue(ConsumerContext ctx, Delivery<T> delivery, RowKeys keys, Outcomes outcomes, int partitions,
                   java.util.function.Supplier<Integer[]> ownedBuckets) {
        this.ctx = ctx;
        this.sql = ctx.sql.exceptions;
        this.claimRowsSql = ownedBuckets == null ? sql.claimRows(ctx.policy) : sql.claimPartitionRows;
        this.delivery = delivery;
        this.keys = keys;
        this.outcomes = outcomes;
        this.partitions = partitions;
        this.ownedBuckets = ownedBuckets;
    }

    /**
     * Claims rows and hands each to {@code submit}; {@code outstanding} counts them until they finish, then
     * {@code afterEach} runs. Returns how many rows were claimed.
     */
    int claimAndRun(Consumer<Runnable> submit, AtomicInteger outstanding, Runnable afterEach) {
        Map<Long, ClaimedRow> claimed = claim();
        if (claimed.isEmpty()) {
            return 0;
        }
        inFlight.addAll(claimed.keySet());
        List<Fetched> fetched;
        try {
            fetched = delivery.fetchIds(claimed.keySet());
        } catch (RuntimeException e) {
            inFlight.removeAll(claimed.keySet()); // stop renewing: the leases expire and the rows are claimed again
            throw e;
        }
        Set<Long> missing = new HashSet<>(claimed.keySet());
        outstanding.addAndGet(fetched.size());
        for (Fetched f : fetched) {
            missing.remove(f.id());
            ClaimedRow row = claimed.get(f.id());
            submit.accept(() -> {
                try {
                    run(f, row);
                } finally {
                    inFlight.remove(f.id());
                    outstanding.decrementAndGet();
                    afterEach.run();
                }
            });
        }
        // Rows whose message is gone (retention dropped it): nothing left to deliver.
        for (long id : missing) {
            write(RowWrite.resolved(id));
            inFlight.remove(id);
        }
        return claimed.size();
    }

    private Map<Long, ClaimedRow> claim() {
        Integer[] buckets = ownedBuckets == null ? null : ownedBuckets.get();
        if (buckets != null && buckets.length == 0) {
            return Map.of();
        }
        return ctx.db.transaction("claim exception rows", c -> {
            Map<Long, ClaimedRow> out = new LinkedHashMap<>();
            try (PreparedStatement ps = c.prepareStatement(claimRowsSql)) {
                // An expiry is a failure: logged unless the group's delivery log is off.
                if (buckets == null) {
                    ExceptionSql.bindClaimRows(ps, ctx.groupId(), ctx.o.batchSize(), ctx.g.config().retry().maxAttempts(),
                            ctx.logMode != DeliveryLogMode.OFF, ctx.token, ctx.leaseSeconds, ctx.o.maxBytes());
                } else {
                    ExceptionSql.bindClaimPartitionRows(ps, partitions, c.createArrayOf("int4", buckets), ctx.groupId(),
                            ctx.o.batchSize(), ctx.g.config().retry().maxAttempts(), ctx.logMode != DeliveryLogMode.OFF,
                            ctx.token, ctx.leaseSeconds, ctx.o.maxBytes());
                }
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        long id = rs.getLong(1);
                        out.put(id, new ClaimedRow(id, rs.getInt(2), rs.getInt(3), rs.getInt(4)));
                    }
                }
            }
            return out;
        });
    }

    /** Runs one claimed row: skipped, deferred (its key is busy), or delivered; then writes its outcome. */
    private void run(Fetched f, ClaimedRow row) {
        if (delivery.skip(f, delivery.bindings(f.id()))) {
            write(RowWrite.resolved(f.id()));
            return;
        }
        boolean keyed = keys.keyed() && f.messageKey() != null;
        if (keyed && !keys.acquireRow(f)) {
            ctx.stats.deferred.increment();
            write(new RowWrite(f.id(), RowStatus.DEFERRED, null, row.attempt() - 1, row.delays(),
                    Outcomes.deferRecheckSeconds(row.deferrals()), null, null));
            return;
        }
        try {
            Outcome out = delivery.deliver(f, row.attempt(), row.delays());
            Outcomes.Decision d = outcomes.decide(f.id(), f.messageKey(), out, row.attempt(), row.delays());
            ctx.stats.count(d.kind());
            if (d.success()) {
                write(new RowWrite(f.id(), null, ctx.logMode == DeliveryLogMode.ALL ? DeliveryEvent.SUCCESS : null,
                        row.attempt(), row.delays(), 0, null, null));
            } else {
                OutcomeRow r = d.row();
                DeliveryEvent event = ctx.logMode == DeliveryLogMode.OFF ? null : d.event();
                write(new RowWrite(f.id(), r.status(), event, r.attempts(), r.delays(), r.afterSeconds(), r.error(), r.stack()));
            }
        } finally {
            if (keyed) {
                keys.releaseRow(f.messageKey());
            }
        }
    }

    /** Writes an exception row's outcome under its lease (a lost lease changes nothing and is counted). */
    void write(RowWrite w) {
        try {
            boolean ok = ctx.db.transaction("record an outcome", c -> {
                int n;
                if (w.status() == null) {
                    try (PreparedStatement ps = c.prepareStatement(sql.deleteRow)) {
                        ps.setLong(1, ctx.groupId());
                        ps.setLong(2, w.id());
                        ps.setObject(3, ctx.token);
                        n = ps.executeUpdate();
                    }
                } else {
                    String status = w.status().sqlValue();
                    try (PreparedStatement ps = c.prepareStatement(sql.updateRow)) {
                        ps.setString(1, status);
                        ps.setInt(2, w.attempts());
                        ps.setInt(3, w.delays());
                        ps.setString(4, status);
                        ps.setDouble(5, w.afterSeconds());
                        ps.setString(6, w.error());
                        ps.setString(7, w.stack());
                        ps.setString(8, status);
                        ps.setLong(9, ctx.groupId());
                        ps.setLong(10, w.id());
                        ps.setObject(11, ctx.token);
                        n = ps.executeUpdate();
                    }
                }
                if (n == 0) {
                    return false;
                }
                if (w.event() != null) {
                    insertEvents(c, List.of(new LogEvent(w.id(), Math.max(0, w.attempts()), w.event(), w.error())));
                }
                return true;
            });
            if (!ok) {
                ctx.stats.leasesLost.increment();
                ConsumerContext.log.warn("outcome refused, lease lost: group={} message={}", ctx.g.groupName(), w.id());
            }
        } catch (RuntimeException e) {
            ctx.warn("could not record an outcome; the message will be redelivered after its lease", e);
        }
    }

    /** Writes the outcome rows of a range (rows already present are left alone), in the caller's transaction. */
    void insertRows(Connection c, List<OutcomeRow> list) throws SQLException {
        if (list.isEmpty()) {
            return;
        }
        int n = list.size();
        Long[] ids = new Long[n];
        String[] status = new String[n];
        String[] keys = new String[n];
        Integer[] attempts = new Integer[n];
        Integer[] delays = new Integer[n];
        Double[] after = new Double[n];
        String[] err = new String[n];
        String[] stack = new String[n];
        for (int i = 0; i < n; i++) {
            OutcomeRow r = list.get(i);
            ids[i] = r.id();
            status[i] = r.status().sqlValue();
            keys[i] = r.messageKey();
            attempts[i] = r.attempts();
            delays[i] = r.delays();
            after[i] = r.afterSeconds();
            err[i] = r.error();
            stack[i] = r.stack();
        }
        try (PreparedStatement ps = c.prepareStatement(sql.insertRows)) {
            ps.setLong(1, ctx.groupId());
            ps.setString(2, ctx.policy.sqlValue());
            ps.setArray(3, c.createArrayOf("int8", ids));
            ps.setArray(4, c.createArrayOf("text", status));
            ps.setArray(5, c.createArrayOf("text", keys));
            ps.setArray(6, c.createArrayOf("int4", attempts));
            ps.setArray(7, c.createArrayOf("int4", delays));
            ps.setArray(8, c.createArrayOf("float8", after));
            ps.setArray(9, c.createArrayOf("text", err));
            ps.setArray(10, c.createArrayOf("text", stack));
            ps.executeUpdate();
        }
    }

    /** Appends delivery events, in the caller's transaction. */
    void insertEvents(Connection c, List<LogEvent> events) throws SQLException {
        if (events.isEmpty()) {
            return;
        }
        try (PreparedStatement ps = c.prepareStatement(sql.deliveryLog)) {
            ps.setLong(1, ctx.groupId());
            ps.setArray(2, c.createArrayOf("int8", events.stream().map(LogEvent::id).toArray()));
            ps.setArray(3, c.createArrayOf("int4", events.stream().map(LogEvent::attempt).toArray()));
            ps.setArray(4, c.createArrayOf("text", events.stream().map(e -> e.status().sqlValue()).toArray()));
            ps.setArray(5, c.createArrayOf("text", events.stream().map(LogEvent::error).toArray()));
            ps.executeUpdate();
        }
    }

    /** Gives a row back on a clean stop ({@link ExceptionSql#releaseRow}), in the caller's transaction. */
    void release(Connection c, long id) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.releaseRow)) {
            ps.setLong(1, ctx.groupId());
            ps.setLong(2, id);
            ps.setObject(3, ctx.token);
            ps.executeUpdate();
        }
    }

    /** Renews the leases of rows in flight, in the caller's transaction. */
    void renew(Connection c, Set<Long> ids) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.renewRows)) {
            ps.setDouble(1, ctx.leaseSeconds);
            ps.setLong(2, ctx.groupId());
            ps.setArray(3, c.createArrayOf("int8", ids.toArray()));
            ps.setObject(4, ctx.token);
            ps.executeQuery().close();
        }
    }
}
