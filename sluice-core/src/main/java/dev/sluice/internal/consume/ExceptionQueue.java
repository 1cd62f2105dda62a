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
     * An exception row's outcome: {@code status} null deletes the row (resolved); {@code event} null logs nothing;
     * {@code claimed}: the attempts its claim counted, which fences the write (a later claim of the row counted more).
     */
    record RowWrite(long id, int claimed, RowStatus status, DeliveryEvent event, int attempts, int delays, double afterSeconds,
                    String error, String stack) {
        static RowWrite resolved(long id, int claimed) {
            return new RowWrite(id, claimed, null, null, 0, 0, 0, null, null);
        }
    }

    private final ConsumerContext ctx;
    private final ExceptionSql sql;
    private final String claimRowsSql;
    private final Delivery<T> delivery;
    private final RowKeys keys;
    private final Outcomes outcomes;
    /**
     * The rows this consumer runs now (their leases are renewed), each with the attempts its claim counted. A row this
     * consumer claims again while an earlier claim of it still runs (that claim's lease ran out) replaces the entry;
     * the earlier one leaves only its own.
     */
    final Map<Long, Integer> inFlight = new ConcurrentHashMap<>();
    /**
     * Rows in flight whose handler was started (with their claim's attempts): given back at a clean stop, their delivery
     * stays counted (it happened); a row claimed but not started gives its attempt back.
     */
    private final Map<Long, Integer> started = new ConcurrentHashMap<>();
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
        claimed.forEach((id, row) -> inFlight.put(id, row.attempt()));
        List<Fetched> fetched;
        try {
            fetched = delivery.fetchIds(claimed.keySet());
        } catch (RuntimeException e) {
            claimed.forEach((id, row) -> inFlight.remove(id, row.attempt())); // stop renewing: the leases expire, the rows are claimed again
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
                    inFlight.remove(f.id(), row.attempt());
                    started.remove(f.id(), row.attempt());
                    outstanding.decrementAndGet();
                    afterEach.run();
                }
            });
        }
        // Rows whose message is gone (retention dropped it): nothing left to deliver.
        for (long id : missing) {
            int attempt = claimed.get(id).attempt();
            write(RowWrite.resolved(id, attempt));
            inFlight.remove(id, attempt);
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

    /** At most this many rows run in a row under one key lease before the key is let go (and woken) as usual. */
    static final int MAX_HANDOVERS = 32;

    /**
     * Runs one claimed row: skipped, deferred (its key is busy), or delivered; then writes its outcome. A keyed row
     * that succeeds hands its key straight on to the key's next row when that row may run now ({@link #handOver}), and
     * that row runs here too, up to {@link #MAX_HANDOVERS}: a key whose messages went to the exception queue behind a
     * failure then drains at one transaction per message instead of a claim, a key take, an outcome write and a key
     * release each.
     */
    private void run(Fetched f, ClaimedRow row) {
        if (delivery.skip(f, delivery.bindings(f.id()))) {
            write(RowWrite.resolved(f.id(), row.attempt()));
            return;
        }
        boolean keyed = keys.keyed() && f.messageKey() != null;
        if (keyed && !keys.acquireRow(f)) {
            ctx.stats.deferred.increment();
            write(new RowWrite(f.id(), row.attempt(), RowStatus.DEFERRED, null, row.attempt() - 1, row.delays(),
                    Outcomes.deferRecheckSeconds(row.deferrals()), null, null));
            return;
        }
        boolean held = keyed;
        Fetched cur = f;
        ClaimedRow r = row;
        long taken = -1; // a row taken by a handover: in flight until it is written
        int takenAttempt = 0;
        try {
            for (int handovers = 0; ; handovers++) {
                RowWrite w = deliver(cur, r, cur != f);
                if (!held || w.status() != null || !keys.handsOn() || handovers >= MAX_HANDOVERS) {
                    write(w);
                    return;
                }
                Handover h = handOver(w, cur.messageKey());
                held = !h.released();
                if (taken >= 0) {
                    inFlight.remove(taken, takenAttempt);
                    started.remove(taken, takenAttempt);
                    taken = -1;
                }
                if (h.next() == null) {
                    return;
                }
                r = h.next();
                ctx.stats.handedOn.increment();
                taken = r.id();
                takenAttempt = r.attempt();
                inFlight.put(taken, takenAttempt);
                List<Fetched> got = delivery.fetchIds(Set.of(taken));
                if (got.isEmpty()) {
                    write(RowWrite.resolved(taken, takenAttempt)); // retention dropped its message
                    return;
                }
                cur = got.get(0);
            }
        } finally {
            if (taken >= 0) {
                inFlight.remove(taken, takenAttempt);
                started.remove(taken, takenAttempt);
            }
            if (held) {
                keys.releaseRow(f.messageKey());
            }
        }
    }

    /** A delivery (or, when {@code checkSkip}, a skip of a row its bindings do not match) and the outcome to write for it. */
    private RowWrite deliver(Fetched f, ClaimedRow row, boolean checkSkip) {
        if (checkSkip && delivery.skip(f, delivery.bindings(f.id()))) {
            return RowWrite.resolved(f.id(), row.attempt());
        }
        started.put(f.id(), row.attempt());
        Outcome out = delivery.deliver(f, row.attempt(), row.delays());
        Outcomes.Decision d = outcomes.decide(f.id(), f.messageKey(), out, row.attempt(), row.delays());
        ctx.stats.count(d.kind());
        if (d.success()) {
            return new RowWrite(f.id(), row.attempt(), null, ctx.logMode == DeliveryLogMode.ALL ? DeliveryEvent.SUCCESS : null,
                    row.attempt(), row.delays(), 0, null, null);
        }
        OutcomeRow o = d.row();
        DeliveryEvent event = ctx.logMode == DeliveryLogMode.OFF ? null : d.event();
        return new RowWrite(f.id(), row.attempt(), o.status(), event, o.attempts(), o.delays(), o.afterSeconds(), o.error(), o.stack());
    }

    /** What {@link #handOver} did: the key's next row now taken by this consumer (or null), and whether it let the key go. */
    private record Handover(ClaimedRow next, boolean released) {
    }

    /**
     * In one transaction: resolves a row that succeeded (under its lease), then, still holding its key, takes the key's
     * lowest unresolved row if it may run now (and, for {@code ordered}, no earlier message of the key is open in a
     * range); else lets the key go and wakes its next deferred row, as a release does. A lost row lease changes
     * nothing (the key is then let go by the caller); a failed transaction is logged and the row is redelivered after
     * its lease.
     */
    private Handover handOver(RowWrite w, String key) {
        try {
            Handover h = ctx.db.transaction("resolve a row and hand its key on", c -> {
                try (PreparedStatement ps = c.prepareStatement(sql.deleteRow)) {
                    ps.setLong(1, ctx.groupId());
                    ps.setLong(2, w.id());
                    ps.setObject(3, ctx.token);
                    ps.setInt(4, w.claimed());
                    if (ps.executeUpdate() == 0) {
                        return null;
                    }
                }
                if (w.event() != null) {
                    insertEvents(c, List.of(new LogEvent(w.id(), Math.max(0, w.attempts()), w.event(), w.error())));
                }
                long next = -1;
                try (PreparedStatement ps = c.prepareStatement(sql.nextRowOfKey)) {
                    ps.setLong(1, ctx.groupId());
                    ps.setString(2, key);
                    try (ResultSet rs = ps.executeQuery()) {
                        if (rs.next() && rs.getBoolean(2)) {
                            next = rs.getLong(1);
                        }
                    }
                }
                if (next < 0 || keys.blockedIn(c, key, next)) {
                    keys.releaseIn(c, key);
                    return new Handover(null, true);
                }
                try (PreparedStatement ps = c.prepareStatement(sql.takeRow)) {
                    ps.setObject(1, ctx.token);
                    ps.setDouble(2, ctx.leaseSeconds);
                    ps.setLong(3, ctx.groupId());
                    ps.setLong(4, next);
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        return new Handover(new ClaimedRow(rs.getLong(1), rs.getInt(2), rs.getInt(3), rs.getInt(4)), false);
                    }
                }
            });
            if (h == null) {
                ctx.stats.leasesLost.increment();
                ConsumerContext.log.warn("outcome refused, lease lost: group={} message={}", ctx.g.groupName(), w.id());
                return new Handover(null, false);
            }
            return h;
        } catch (RuntimeException e) {
            ctx.warn("could not record an outcome; the message will be redelivered after its lease", e);
            return new Handover(null, false);
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
                        ps.setInt(4, w.claimed());
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
                        ps.setInt(12, w.claimed());
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
        long low = Long.MAX_VALUE;
        long high = Long.MIN_VALUE;
        for (int i = 0; i < n; i++) {
            OutcomeRow r = list.get(i);
            ids[i] = r.id();
            low = Math.min(low, r.id());
            high = Math.max(high, r.id());
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
            ps.setLong(11, low);
            ps.setLong(12, high);
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
        Integer claimed = inFlight.get(id);
        if (claimed == null) {
            return; // finished meanwhile
        }
        try (PreparedStatement ps = c.prepareStatement(sql.releaseRow)) {
            ps.setBoolean(1, claimed.equals(started.get(id)));
            ps.setInt(2, ctx.g.config().retry().maxAttempts());
            ps.setBoolean(3, ctx.logMode != DeliveryLogMode.OFF);
            ps.setLong(4, ctx.groupId());
            ps.setLong(5, id);
            ps.setObject(6, ctx.token);
            ps.setInt(7, claimed);
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
