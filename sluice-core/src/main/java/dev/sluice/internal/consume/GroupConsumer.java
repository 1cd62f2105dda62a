package dev.sluice.internal.consume;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.ConcurrencyPolicy;
import dev.sluice.ConsumeOptions;
import dev.sluice.Consumption;
import dev.sluice.ConsumptionStats;
import dev.sluice.DeliveryLogMode;
import dev.sluice.Handler;
import dev.sluice.Message;
import dev.sluice.Outcome;
import dev.sluice.RetryPolicy;
import dev.sluice.Serde;
import dev.sluice.internal.consume.GroupCatalog.GroupRef;
import dev.sluice.internal.consume.RangeWork.LogEvent;
import dev.sluice.internal.consume.RangeWork.OutcomeRow;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.jdbc.ErrorText;
import dev.sluice.internal.notify.ClientSession;
import dev.sluice.internal.schema.FamilyTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One running consumption of a group: the claim loop (fenced range claims, reclaims, exception rows),
 * the handler executor, lease renewal, outcomes and the clean stop. See docs/consume.md.
 */
public final class GroupConsumer<T> implements Consumption {
    private static final Logger log = LoggerFactory.getLogger(GroupConsumer.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    /**
     * How long a deferred message first waits before it re-checks its key by itself (a wake-up usually
     * comes sooner, but one can race the deferral); each further deferral doubles it, up to 1 s. Row
     * claims of keyed groups take at most one row per key, so a short cap costs one re-check per key and
     * second, while a long one let a waiting row lose its key to later ones for many seconds (the lab
     * measured a redelivery 14 s after a kill with a 5 s cap).
     */
    private static final double DEFER_RECHECK_SECONDS = 0.1;
    private static final double DEFER_RECHECK_MAX_SECONDS = 1;
    private static final long PROBE_EVERY_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** How long a keyed group leaves due rows alone after none of them could run (unless notified). */
    private static final long ROWS_QUIET_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** How often chains waiting for a busy key retry it. */
    private static final long KEY_RETRY_MS = 10;
    /** How long {@link #close()} spends at most giving back unfinished work, after the handlers' shutdown timeout. */
    static final Duration RELEASE_LIMIT = Duration.ofSeconds(10);

    private final Db db;
    private final GroupRef g;
    private final FamilyTables t;
    /** The statement owners of the stream, shared ({@link ConsumeSql#of}). */
    private final ConsumeSql sql;
    private final Handler<T> handler;
    private final ConsumeOptions o;
    private final Serde<T> serde;
    private final Set<Integer> accept;
    private final RetryPolicy retry;
    private final ConcurrencyPolicy policy;
    private final DeliveryLogMode logMode;
    private final ClientSession session;
    private final String presenceKey;
    private final String channel;
    private final UUID token = UUID.randomUUID();
    private final double leaseSeconds;
    /** The row claim of this group's policy ({@link ExceptionSql#claimRows}), built once. */
    private final String claimRowsSql;

    private final Thread loop;
    private final ExecutorService ownExecutor;
    private final Executor executor;
    private final Semaphore slots;
    private final ScheduledExecutorService ticker;
    private final AutoCloseable wakeRegistration;

    private final Map<Long, RangeWork> ranges = new ConcurrentHashMap<>();
    /** Chains waiting for a busy key (exclusive and ordered only); retried by {@link #keyRetry}. */
    private final java.util.Queue<WaitingChain> waiting = new java.util.concurrent.ConcurrentLinkedQueue<>();
    private final ScheduledExecutorService keyRetry;
    private final long keyWaitNanos;
    private final Set<Long> rows = ConcurrentHashMap.newKeySet();
    private final AtomicInteger outstanding = new AtomicInteger();
    private volatile boolean running = true;
    private volatile boolean wakeFlag;
    /**
     * Claim before probing: set by a stream notification (new messages committed) and by a full claim
     * (more is waiting), so a wake-up costs one round trip. The probe still runs at least every
     * {@link #PROBE_EVERY_NANOS}, so expired ranges and due rows are served during a long backlog.
     */
    private volatile boolean claimFirst;
    /** Set when a row of a keyed group resolved: the next poll claims rows before anything else. */
    private volatile boolean rowsFirst;
    /** When the current run of claims without a probe began (0: the last poll probed). Loop thread only. */
    private long claimStreakStart;
    /** Until when (System.nanoTime) the probe's due rows are not claimed again: none could run. */
    private volatile long rowsQuietUntil = System.nanoTime();
    private volatile Bindings bindings;
    private volatile long bindingsValidThrough;
    private volatile long lastWarn;
    /** When the last renewal succeeded (System.nanoTime; 0: none yet). Renewal thread only. */
    private long lastRenewal;
    /**
     * Test hook: a frozen holder (a long GC pause, a network partition) — it neither renews nor
     * claims, while its handlers keep running.
     */
    volatile boolean renewalSuspended;

    private final LongAdder delivered = new LongAdder();
    private final LongAdder succeeded = new LongAdder();
    private final LongAdder retried = new LongAdder();
    private final LongAdder dead = new LongAdder();
    private final LongAdder delayed = new LongAdder();
    private final LongAdder deferred = new LongAdder();
    private final LongAdder skippedSuperseded = new LongAdder();
    private final LongAdder skippedVersion = new LongAdder();
    private final LongAdder skippedFiltered = new LongAdder();
    private final LongAdder rangesClaimed = new LongAdder();
    private final LongAdder rangesReclaimed = new LongAdder();
    private final LongAdder leasesLost = new LongAdder();

    public GroupConsumer(Db db, String schema, GroupRef g, Handler<T> handler, ConsumeOptions o, Serde<T> serde,
                         Set<Integer> accept, ClientSession session) {
        this.db = db;
        this.g = g;
        this.t = g.tables();
        this.sql = ConsumeSql.of(t);
        this.handler = handler;
        this.o = o;
        this.serde = serde;
        this.accept = accept;
        this.retry = g.config().retry();
        this.policy = g.config().concurrency();
        this.logMode = g.deliveryLogMode();
        this.session = session;
        this.presenceKey = Presence.key(schema, g.groupId());
        this.channel = dev.sluice.internal.notify.Channels.forSchema(schema);
        this.leaseSeconds = o.leaseTimeout().toMillis() / 1000.0;
        this.claimRowsSql = sql.exceptions.claimRows(policy);
        this.slots = new Semaphore(o.concurrency());
        if (o.executor() == null) {
            AtomicInteger n = new AtomicInteger();
            this.ownExecutor = Executors.newFixedThreadPool(o.concurrency(), r -> {
                Thread th = new Thread(r, "sluice-handler-" + g.groupName() + "-" + n.incrementAndGet());
                th.setDaemon(true);
                return th;
            });
            this.executor = ownExecutor;
        } else {
            this.ownExecutor = null;
            this.executor = o.executor();
        }
        this.ticker = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread th = new Thread(r, "sluice-renew-" + g.groupName());
            th.setDaemon(true);
            return th;
        });
        if (session != null) {
            try {
                session.holdPresence(presenceKey).get(5, TimeUnit.SECONDS);
            } catch (Exception e) {
                log.warn("presence lock not confirmed yet: group={} error={}", g.groupName(), e.toString());
            }
            this.wakeRegistration = o.wakeups() ? session.onWake(g.streamId(), this::notified) : null;
        } else {
            this.wakeRegistration = null;
        }
        long renewMs = Math.max(100, o.leaseTimeout().toMillis() / 3);
        ticker.scheduleWithFixedDelay(this::renew, renewMs, renewMs, TimeUnit.MILLISECONDS);
        // How long a chain waits in memory for a busy key before it becomes deferred rows.
        this.keyWaitNanos = Math.min(o.leaseTimeout().toNanos() / 3, TimeUnit.SECONDS.toNanos(2));
        if (policy != ConcurrencyPolicy.PARALLEL) {
            this.keyRetry = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread th = new Thread(r, "sluice-keys-" + g.groupName());
                th.setDaemon(true);
                return th;
            });
            keyRetry.scheduleWithFixedDelay(this::retryWaiting, KEY_RETRY_MS, KEY_RETRY_MS, TimeUnit.MILLISECONDS);
        } else {
            this.keyRetry = null;
        }
        this.loop = new Thread(this::loop, "sluice-consumer-" + g.streamName() + "-" + g.groupName());
        this.loop.setDaemon(true);
        this.loop.start();
    }

    // ------------------------------------------------------------------ the loop

    private void wake() {
        wakeFlag = true;
        LockSupport.unpark(loop);
    }

    /** A stream notification: messages were committed, so the next poll claims at once. */
    private void notified() {
        claimFirst = true;
        rowsQuietUntil = System.nanoTime();
        wake();
    }

    private void loop() {
        long errorBackoff = 100;
        while (running) {
            try {
                long waitNanos;
                if (renewalSuspended) {
                    waitNanos = TimeUnit.MILLISECONDS.toNanos(100);
                } else if (outstanding.get() < o.concurrency() + o.batchSize()) {
                    waitNanos = pollOnce();
                } else {
                    waitNanos = TimeUnit.MILLISECONDS.toNanos(500); // full: a finishing handler wakes us
                }
                errorBackoff = 100;
                if (waitNanos > 0) {
                    park(waitNanos);
                }
            } catch (RuntimeException e) {
                warn("consumer loop error; retrying", e);
                park(TimeUnit.MILLISECONDS.toNanos(errorBackoff));
                errorBackoff = Math.min(dev.sluice.internal.jdbc.SqlErrors.maxPollBackoffMillis(e), errorBackoff * 2);
            }
        }
    }

    private void park(long nanos) {
        long deadline = System.nanoTime() + nanos;
        while (running && !wakeFlag) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            LockSupport.parkNanos(this, left);
        }
        wakeFlag = false;
    }

    private record Probe(long claimed, long settledHead, boolean pending, long head, Instant nextLease, Instant nextDue,
                         Instant nextRowExpiry, Instant now) {
    }

    /** One poll; returns how long to wait before the next one (0: poll again at once). */
    private long pollOnce() {
        boolean progressed = false;
        if (claimFirst) {
            claimFirst = false;
            long now = System.nanoTime();
            if (claimStreakStart == 0) {
                claimStreakStart = now;
            }
            if (now - claimStreakStart < PROBE_EVERY_NANOS) {
                FreshClaim r = claimFresh();
                if (r.claimed()) {
                    progressed = true;
                } else if (r.pending() && awaitSettled()) {
                    claimFirst = true;
                    progressed = true;
                }
            }
        }
        if (rowsFirst) {
            // A row of ours just resolved: the next row of its key can run now, so claim rows at once
            // rather than at the next probe (per-key progress in row mode would otherwise be one per probe).
            rowsFirst = false;
            progressed |= claimRows() > 0;
        }
        if (progressed) {
            return 0;
        }
        claimFirst = false;
        claimStreakStart = 0;
        Probe p = db.autoCommitReplayable("probe group", c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.ranges.probe)) {
                ps.setLong(1, g.groupId());
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        throw new dev.sluice.SluiceException(dev.sluice.ErrorCode.GROUP_NOT_FOUND,
                                "group '" + g.groupName() + "' has no cursor (destroyed?)");
                    }
                    return new Probe(rs.getLong(1), rs.getLong(2), rs.getBoolean(3), rs.getLong(4), instant(rs.getTimestamp(5)),
                            instant(rs.getTimestamp(6)), instant(rs.getTimestamp(7)), rs.getTimestamp(8).toInstant());
                }
            }
        });
        if (due(p.nextLease(), p.now()) && reclaimRange()) {
            return 0;
        }
        boolean rowsDue = due(p.nextDue(), p.now()) || due(p.nextRowExpiry(), p.now());
        if (rowsDue && System.nanoTime() - rowsQuietUntil >= 0) {
            if (claimRows() > 0) {
                return 0;
            }
            if (policy != ConcurrencyPolicy.PARALLEL) {
                // Due rows, none of which can run now (same-key rows behind an unresolved one): look again
                // after a pause or when notified (a resolved row wakes the next of its key with a NOTIFY).
                rowsQuietUntil = System.nanoTime() + Math.min(ROWS_QUIET_NANOS, o.pollInterval().toNanos());
            }
        }
        if (p.head() > p.claimed() || p.pending()) {
            FreshClaim r = claimFresh();
            if (r.claimed()) {
                return 0;
            }
            if (r.pending()) {
                return awaitSettled() ? 0 : TimeUnit.MILLISECONDS.toNanos(Math.min(100, o.pollInterval().toMillis()));
            }
        }
        Duration idle = session != null && o.wakeups() && session.healthy() ? o.idleCheck() : o.pollInterval();
        long wait = idle.toNanos();
        long quietLeft = rowsQuietUntil - System.nanoTime();
        for (Instant next : new Instant[] {p.nextLease(), p.nextDue(), p.nextRowExpiry()}) {
            if (next != null) {
                long until = Math.max(0, Duration.between(p.now(), next).toNanos() + 1_000_000);
                if (next != p.nextLease() && quietLeft > 0) {
                    until = Math.max(until, quietLeft);
                }
                wait = Math.min(wait, until);
            }
        }
        return Math.max(wait, 1_000_000);
    }

    private static boolean due(Instant at, Instant now) {
        return at != null && !at.isAfter(now);
    }

    private static Instant instant(Timestamp ts) {
        return ts == null ? null : ts.toInstant();
    }

    private record FreshClaim(boolean claimed, boolean pending) {
    }

    /**
     * The fenced claim of a fresh range with its messages, in one round trip (see {@link RangeSql#claim}),
     * before any handler runs.
     */
    private FreshClaim claimFresh() {
        ClaimResult r = db.autoCommitReplayable("claim a range", c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.ranges.claim)) {
                sql.ranges.bindClaim(ps, g.groupId(), o.batchSize(), o.maxBytes(), token, leaseSeconds);
                ps.execute(); // statement 1: the observation
                if (!ps.getMoreResults()) {
                    throw new SQLException("the claim returned no second result");
                }
                try (ResultSet rs = ps.getResultSet()) {
                    return claimResult(rs);
                }
            }
        });
        if (r.leaseId() == 0) {
            return new FreshClaim(false, r.pending());
        }
        rangesClaimed.increment();
        if (r.newClaimed() - r.oldClaimed() >= o.batchSize() || r.newClaimed() < r.observed()) {
            claimFirst = true; // more is waiting
        }
        if (r.newClaimed() > bindingsValidThrough) {
            bindings = parseBindings(r.bindingsJson());
            bindingsValidThrough = r.headWithBindings();
        }
        startRange(new RangeWork(r.leaseId(), r.oldClaimed() + 1, r.newClaimed(), 0, Set.of()), r.messages());
        return new FreshClaim(true, r.pending());
    }

    private record ClaimResult(long oldClaimed, long newClaimed, boolean pending, long leaseId, long observed,
                               String bindingsJson, long headWithBindings, List<Fetched> messages) {
    }

    private static ClaimResult claimResult(ResultSet rs) throws SQLException {
        if (!rs.next()) {
            throw new dev.sluice.SluiceException(dev.sluice.ErrorCode.GROUP_NOT_FOUND, "the group has no cursor (destroyed?)");
        }
        long oldClaimed = rs.getLong(1);
        long newClaimed = rs.getLong(2);
        boolean pending = rs.getBoolean(3);
        long leaseId = rs.getLong(4);
        long observed = rs.getLong(5);
        String bindingsJson = rs.getString(6);
        long head = rs.getLong(7);
        List<Fetched> messages = new ArrayList<>();
        do {
            rs.getLong(8);
            if (!rs.wasNull()) {
                messages.add(fetched(rs, 7));
            }
        } while (rs.next());
        return new ClaimResult(oldClaimed, newClaimed, pending, leaseId, observed, bindingsJson, head, messages);
    }

    private static Bindings parseBindings(String json) {
        List<Bindings.Entry> entries = new ArrayList<>();
        if (json != null) {
            try {
                for (com.fasterxml.jackson.databind.JsonNode e : JSON.readTree(json)) {
                    entries.add(Bindings.entry(e.get(0).asText(), e.get(1).asLong(), e.get(2).isNull() ? null : e.get(2).asLong()));
                }
            } catch (java.io.IOException e) {
                throw new IllegalStateException("unreadable bindings from the claim: " + e.getMessage(), e);
            }
        }
        return new Bindings(entries);
    }

    /** Waits briefly (read-only checks, no xid) for the pending observation to settle. */
    private boolean awaitSettled() {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.min(200, o.pollInterval().toMillis()));
        long sleepMicros = 200;
        while (running && System.nanoTime() < deadline) {
            boolean settled = db.autoCommitReplayable("check the fence", c -> {
                try (PreparedStatement ps = c.prepareStatement(sql.ranges.settled)) {
                    ps.setLong(1, g.groupId());
                    try (ResultSet rs = ps.executeQuery()) {
                        return rs.next() && rs.getBoolean(1);
                    }
                }
            });
            if (settled) {
                return true;
            }
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(sleepMicros));
            sleepMicros = Math.min(20_000, sleepMicros * 2);
        }
        return false;
    }

    /** Takes over the lowest expired range (or quarantines it after too many reclaims). */
    private boolean reclaimRange() {
        Object[] taken = db.transaction("reclaim a range", c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.ranges.reclaimRange)) {
                ps.setObject(1, token);
                ps.setDouble(2, leaseSeconds);
                ps.setLong(3, g.groupId());
                ps.setLong(4, g.groupId());
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        return null;
                    }
                    long id = rs.getLong(1);
                    long low = rs.getLong(2);
                    long high = rs.getLong(3);
                    int reclaims = rs.getInt(4);
                    Long[] resolved = (Long[]) rs.getArray(5).getArray();
                    if (reclaims > g.config().maxRangeReclaims()) {
                        try (PreparedStatement q = c.prepareStatement(sql.exceptions.quarantine)) {
                            q.setLong(1, id);
                            q.setLong(2, g.groupId());
                            q.setString(3, policy.sqlValue());
                            int n = q.executeUpdate();
                            log.warn("range quarantined: group={} low={} high={} reclaims={} rows={}", g.groupName(), low, high, reclaims, n);
                        }
                        return new Object[] {null};
                    }
                    return new Object[] {new RangeWork(id, low, high, reclaims, new HashSet<>(java.util.Arrays.asList(resolved)))};
                }
            }
        });
        if (taken == null) {
            return false;
        }
        if (taken[0] != null) {
            rangesReclaimed.increment();
            RangeWork w = (RangeWork) taken[0];
            log.debug("range taken over: group={} low={} high={} reclaims={}", g.groupName(), w.low, w.high, w.reclaims);
            startRange(w, null);
        }
        return true;
    }

    // ------------------------------------------------------------------ ranges

    private void startRange(RangeWork w, List<Fetched> prefetched) {
        ranges.put(w.leaseId, w);
        try {
            dispatchRange(w, prefetched == null ? fetchRange(w) : prefetched);
        } catch (RuntimeException e) {
            // Nothing was handed to handlers (or what was keeps running): stop renewing the range and give
            // it back at once (as a clean stop does) so that it is taken over now, not when its lease expires;
            // if even that fails, it expires.
            if (w.remaining.get() == 0 && !w.done) {
                w.done = true;
                ranges.remove(w.leaseId);
                try {
                    db.transaction("give back a range", c -> {
                        releaseRange(c, w, w.resolved);
                        return null;
                    });
                } catch (RuntimeException release) {
                    e.addSuppressed(release);
                }
            }
            throw e;
        }
    }

    private List<Fetched> fetchRange(RangeWork w) {
        return db.autoCommitReplayable("fetch a range", c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.messages.fetchRange)) {
                ps.setLong(1, w.low);
                ps.setLong(2, w.high);
                ps.setArray(3, c.createArrayOf("int8", w.resolved.toArray()));
                return read(ps);
            }
        });
    }

    private void dispatchRange(RangeWork w, List<Fetched> fetched) {
        Bindings b = bindings(w.high);
        List<Fetched> runnable = new ArrayList<>();
        Instant now = Instant.now();
        for (Fetched f : fetched) {
            if (skip(f, b)) {
                w.resolved.add(f.id());
                continue;
            }
            Instant deliverAt = deliverAt(f);
            if (deliverAt != null && deliverAt.isAfter(now)) {
                w.addRow(new OutcomeRow(f.id(), "ready", f.messageKey(), 0, 0,
                        Duration.between(now, deliverAt).toMillis() / 1000.0, null, null));
                continue;
            }
            runnable.add(f);
        }
        int attempt = w.reclaims + 1;
        if (policy == ConcurrencyPolicy.PARALLEL) {
            w.remaining.set(runnable.size());
            outstanding.addAndGet(runnable.size());
            for (Fetched f : runnable) {
                submit(() -> {
                    runInRange(w, f, attempt);
                    finishOne(w);
                });
            }
        } else {
            Map<String, List<Fetched>> chains = new TreeMap<>();
            List<Fetched> keyless = new ArrayList<>();
            for (Fetched f : runnable) {
                if (f.messageKey() == null) {
                    keyless.add(f);
                } else {
                    chains.computeIfAbsent(f.messageKey(), k -> new ArrayList<>()).add(f);
                }
            }
            Set<String> runnableKeys = acquireKeys(w, chains);
            // A busy key usually frees within milliseconds (another range's chain of it is running): its chain
            // waits in memory and retries, and becomes deferred rows only when the key stays busy longer.
            List<WaitingChain> blocked = new ArrayList<>();
            long deadline = System.nanoTime() + keyWaitNanos;
            for (Map.Entry<String, List<Fetched>> e : chains.entrySet()) {
                if (!runnableKeys.contains(e.getKey())) {
                    blocked.add(new WaitingChain(w, e.getKey(), e.getValue(), attempt, deadline));
                }
            }
            int tasks = keyless.size() + chains.size();
            w.remaining.set(tasks);
            outstanding.addAndGet(tasks);
            for (Fetched f : keyless) {
                submit(() -> {
                    runInRange(w, f, attempt);
                    finishOne(w);
                });
            }
            for (Map.Entry<String, List<Fetched>> e : chains.entrySet()) {
                if (runnableKeys.contains(e.getKey())) {
                    List<Fetched> chain = e.getValue();
                    submit(() -> {
                        runChain(w, chain, attempt);
                        finishOne(w);
                    });
                }
            }
            waiting.addAll(blocked);
        }
        if (w.remaining.get() == 0) {
            completeRange(w);
        }
    }

    /** Key leases for a range's chains; for ordered, also drops keys with an unresolved earlier message. */
    private Set<String> acquireKeys(RangeWork w, Map<String, List<Fetched>> chains) {
        if (chains.isEmpty()) {
            return Set.of();
        }
        return db.transaction("take key leases", c -> {
            Set<String> held = takeKeys(c, chains);
            if (!held.isEmpty()) {
                // ordered: an unresolved earlier message blocks the key; exclusive: an earlier row of the key
                // that is due and waiting goes first (else fresh ranges could take a busy key ahead of it forever).
                Set<String> blocked = policy == ConcurrencyPolicy.ORDERED ? blockedKeys(c, held, chains, w.leaseId)
                        : waitingKeys(c, held, chains);
                if (!blocked.isEmpty()) {
                    releaseKeys(c, blocked);
                    held.removeAll(blocked);
                }
            }
            w.keys.addAll(held);
            return held;
        });
    }

    private Set<String> takeKeys(Connection c, Map<String, List<Fetched>> chains) throws SQLException {
        List<String> keys = new ArrayList<>(chains.keySet());
        Long[] ids = keys.stream().map(k -> chains.get(k).get(0).id()).toArray(Long[]::new);
        Set<String> held = new HashSet<>();
        try (PreparedStatement ps = c.prepareStatement(sql.keys.acquireKeys)) {
            ps.setLong(1, g.groupId());
            ps.setObject(2, token);
            ps.setDouble(3, leaseSeconds);
            ps.setArray(4, c.createArrayOf("text", keys.toArray()));
            ps.setArray(5, c.createArrayOf("int8", ids));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    held.add(rs.getString(1));
                }
            }
        }
        return held;
    }

    private Set<String> blockedKeys(Connection c, Set<String> keys, Map<String, List<Fetched>> chains, long ownLease)
            throws SQLException {
        List<String> list = new ArrayList<>(keys);
        Long[] firsts = list.stream().map(k -> chains.get(k).get(0).id()).toArray(Long[]::new);
        Set<String> blocked = new HashSet<>();
        try (PreparedStatement ps = c.prepareStatement(sql.keys.blockedKeys)) {
            ps.setArray(1, c.createArrayOf("text", list.toArray()));
            ps.setArray(2, c.createArrayOf("int8", firsts));
            ps.setLong(3, g.groupId());
            ps.setLong(4, g.groupId());
            ps.setLong(5, g.groupId());
            ps.setLong(6, ownLease);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    blocked.add(rs.getString(1));
                }
            }
        }
        return blocked;
    }

    private Set<String> waitingKeys(Connection c, Set<String> keys, Map<String, List<Fetched>> chains) throws SQLException {
        List<String> list = new ArrayList<>(keys);
        Long[] firsts = list.stream().map(k -> chains.get(k).get(0).id()).toArray(Long[]::new);
        Set<String> waiting = new HashSet<>();
        try (PreparedStatement ps = c.prepareStatement(sql.keys.waitingKeys)) {
            ps.setArray(1, c.createArrayOf("text", list.toArray()));
            ps.setArray(2, c.createArrayOf("int8", firsts));
            ps.setLong(3, g.groupId());
            ps.setLong(4, g.groupId());
            ps.setLong(5, g.groupId());
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    waiting.add(rs.getString(1));
                }
            }
        }
        return waiting;
    }

    /** Gives a range's lease back at once (taken over now, not counted as a reclaim), keeping {@code resolved}. */
    private void releaseRange(Connection c, RangeWork w, Set<Long> resolved) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.ranges.releaseRange)) {
            ps.setArray(1, c.createArrayOf("int8", resolved.toArray()));
            ps.setLong(2, w.leaseId);
            ps.setObject(3, token);
            ps.executeUpdate();
        }
    }

    private void releaseKeys(Connection c, Set<String> keys) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.keys.releaseKeys)) {
            ps.setLong(1, g.groupId());
            ps.setObject(2, token);
            ps.setArray(3, c.createArrayOf("text", keys.toArray()));
            ps.executeUpdate();
        }
    }

    /** A chain whose key was busy when its range was dispatched; counted in its range's remaining tasks. */
    private record WaitingChain(RangeWork w, String key, List<Fetched> chain, int attempt, long deadlineNanos) {
    }

    /**
     * Retries the keys of waiting chains (one key transaction per range): a chain whose key is now free runs,
     * one whose key stayed busy past its deadline — or any, once stopping — becomes deferred rows.
     */
    private void retryWaiting() {
        if (waiting.isEmpty()) {
            return;
        }
        List<WaitingChain> batch = new ArrayList<>();
        WaitingChain next;
        while ((next = waiting.poll()) != null) {
            batch.add(next);
        }
        Map<RangeWork, Map<String, WaitingChain>> byRange = new LinkedHashMap<>();
        for (WaitingChain wc : batch) {
            byRange.computeIfAbsent(wc.w(), k -> new TreeMap<>()).put(wc.key(), wc);
        }
        long now = System.nanoTime();
        for (Map.Entry<RangeWork, Map<String, WaitingChain>> e : byRange.entrySet()) {
            RangeWork w = e.getKey();
            Set<String> got = Set.of();
            if (running && !w.lost) {
                Map<String, List<Fetched>> chains = new TreeMap<>();
                e.getValue().forEach((k, wc) -> chains.put(k, wc.chain()));
                try {
                    got = acquireKeys(w, chains);
                } catch (RuntimeException ex) {
                    warn("could not retry busy keys", ex);
                }
            }
            for (WaitingChain wc : e.getValue().values()) {
                if (got.contains(wc.key())) {
                    submit(() -> {
                        runChain(w, wc.chain(), wc.attempt());
                        finishOne(w);
                    });
                } else if (!running || w.lost || now - wc.deadlineNanos() > 0) {
                    deferChain(w, wc.chain(), wc.attempt());
                    finishOne(w);
                } else {
                    waiting.add(wc);
                }
            }
        }
    }

    private void deferChain(RangeWork w, List<Fetched> chain, int attempt) {
        for (Fetched f : chain) {
            deferred.increment();
            w.addRow(new OutcomeRow(f.id(), "deferred", f.messageKey(), attempt - 1, 0, DEFER_RECHECK_SECONDS, null, null));
            event(w, f.id(), attempt, "deferred", null);
        }
    }

    /** Same-key messages of a range run one after another; for ordered, an unresolved one defers the rest. */
    private void runChain(RangeWork w, List<Fetched> chain, int attempt) {
        boolean blocked = false;
        for (Fetched f : chain) {
            if (blocked || !running && w.lost) {
                deferred.increment();
                w.addRow(new OutcomeRow(f.id(), "deferred", f.messageKey(), attempt - 1, 0, DEFER_RECHECK_SECONDS, null, null));
                event(w, f.id(), attempt, "deferred", null);
                continue;
            }
            String status = runInRange(w, f, attempt);
            if (policy == ConcurrencyPolicy.ORDERED && ("ready".equals(status))) {
                blocked = true;
            }
        }
    }

    /** Runs one message of a range; records its outcome in the range. Returns the row status written, or null for success. */
    private String runInRange(RangeWork w, Fetched f, int attempt) {
        Outcome out = deliver(f, attempt, 0);
        OutcomeRow row = outcomeRow(f, out, attempt, 0);
        if (row == null) {
            w.resolved.add(f.id());
            if (logMode == DeliveryLogMode.ALL) {
                event(w, f.id(), attempt, "success", null);
            }
            return null;
        }
        w.addRow(row);
        if (logMode != DeliveryLogMode.OFF) {
            event(w, f.id(), attempt, row.status().equals("ready") && out instanceof Outcome.Delay ? "delayed" : row.status().equals("dead") ? "dead" : "failed", row.error());
        }
        return row.status();
    }

    private void event(RangeWork w, long id, int attempt, String status, String error) {
        if (logMode == DeliveryLogMode.ALL || (logMode == DeliveryLogMode.FAILURES && !"success".equals(status) && !"deferred".equals(status))) {
            w.addEvent(new LogEvent(id, attempt, status, error));
        }
    }

    private void finishOne(RangeWork w) {
        outstanding.decrementAndGet();
        if (w.remaining.decrementAndGet() == 0) {
            completeRange(w);
        }
        wake();
    }

    /** Writes a finished range's outcome rows and deletes its lease in one transaction (live holders only). */
    private void completeRange(RangeWork w) {
        if (w.done) {
            return;
        }
        w.done = true;
        ranges.remove(w.leaseId);
        try {
            boolean ok = w.keys.isEmpty() && w.rowsSnapshot().isEmpty() && w.eventsSnapshot().isEmpty()
                    ? completeQuietRange(w) : db.transaction("complete a range", c -> {
                try (PreparedStatement ps = c.prepareStatement(sql.ranges.completeRange)) {
                    ps.setLong(1, w.leaseId);
                    ps.setObject(2, token);
                    try (ResultSet rs = ps.executeQuery()) {
                        if (!rs.next()) {
                            return false;
                        }
                    }
                }
                List<OutcomeRow> written = w.rowsSnapshot();
                insertRows(c, written);
                insertEvents(c, w.eventsSnapshot());
                Set<String> wake = new HashSet<>(w.keys);
                for (OutcomeRow r : written) {
                    if ("deferred".equals(r.status()) && r.messageKey() != null) {
                        wake.add(r.messageKey()); // its blocker may be gone already: do not wait for the re-check
                    }
                }
                if (!w.keys.isEmpty()) {
                    releaseKeys(c, w.keys);
                }
                if (!wake.isEmpty()) {
                    wakeDeferred(c, wake);
                }
                return true;
            });
            if (!ok) {
                leasesLost.increment();
                log.warn("range outcome refused, lease lost: group={} low={} high={}", g.groupName(), w.low, w.high);
            }
        } catch (RuntimeException e) {
            warn("could not record a range's outcome; it will be redelivered after its lease", e);
        }
    }

    /**
     * A range that leaves nothing behind: one statement deletes its lease, which is all that completing it
     * writes (committed follows from the leases left: {@link RangeSql#committedNow}).
     */
    private boolean completeQuietRange(RangeWork w) {
        // Replayable: a replay after an unseen commit finds its lease gone and reports the range lost,
        // which changes nothing (its messages were handled and committed is past them).
        return db.autoCommitReplayable("complete a range", c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.ranges.completeRange)) {
                ps.setLong(1, w.leaseId);
                ps.setObject(2, token);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next();
                }
            }
        });
    }

    private void insertRows(Connection c, List<OutcomeRow> list) throws SQLException {
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
            status[i] = r.status();
            keys[i] = r.messageKey();
            attempts[i] = r.attempts();
            delays[i] = r.delays();
            after[i] = r.afterSeconds();
            err[i] = r.error();
            stack[i] = r.stack();
        }
        try (PreparedStatement ps = c.prepareStatement(sql.exceptions.insertRows)) {
            ps.setLong(1, g.groupId());
            ps.setString(2, policy.sqlValue());
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

    private void insertEvents(Connection c, List<LogEvent> events) throws SQLException {
        if (events.isEmpty()) {
            return;
        }
        try (PreparedStatement ps = c.prepareStatement(sql.exceptions.deliveryLog)) {
            ps.setLong(1, g.groupId());
            ps.setArray(2, c.createArrayOf("int8", events.stream().map(LogEvent::id).toArray()));
            ps.setArray(3, c.createArrayOf("int4", events.stream().map(LogEvent::attempt).toArray()));
            ps.setArray(4, c.createArrayOf("text", events.stream().map(LogEvent::status).toArray()));
            ps.setArray(5, c.createArrayOf("text", events.stream().map(LogEvent::error).toArray()));
            ps.executeUpdate();
        }
    }

    /** Wakes deferred rows of these keys and, when any woke, the other instances too (one NOTIFY). */
    private void wakeDeferred(Connection c, Set<String> keys) throws SQLException {
        int woken;
        try (PreparedStatement ps = c.prepareStatement(sql.exceptions.wakeDeferred)) {
            ps.setLong(1, g.groupId());
            ps.setArray(2, c.createArrayOf("text", keys.toArray()));
            ps.setLong(3, g.groupId());
            woken = ps.executeUpdate();
        }
        if (woken > 0) {
            try (PreparedStatement ps = c.prepareStatement("SELECT pg_notify(?, ?)")) {
                ps.setString(1, channel);
                ps.setString(2, Long.toString(g.streamId()));
                ps.execute();
            }
        }
    }

    // ------------------------------------------------------------------ exception rows

    private int claimRows() {
        Map<Long, int[]> claimed = db.transaction("claim exception rows", c -> {
            Map<Long, int[]> out = new LinkedHashMap<>();
            try (PreparedStatement ps = c.prepareStatement(claimRowsSql)) {
                // An expiry is a failure: logged unless the group's delivery log is off.
                ExceptionSql.bindClaimRows(ps, g.groupId(), o.batchSize(), retry.maxAttempts(), logMode != DeliveryLogMode.OFF,
                        token, leaseSeconds, o.maxBytes());
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        out.put(rs.getLong(1), new int[] {rs.getInt(2), rs.getInt(3), rs.getInt(4)});
                    }
                }
            }
            return out;
        });
        if (claimed.isEmpty()) {
            return 0;
        }
        rows.addAll(claimed.keySet());
        List<Fetched> fetched;
        try {
            fetched = db.autoCommitReplayable("fetch claimed rows", c -> {
                try (PreparedStatement ps = c.prepareStatement(sql.messages.fetchIds)) {
                    ps.setArray(1, c.createArrayOf("int8", claimed.keySet().toArray()));
                    return read(ps);
                }
            });
        } catch (RuntimeException e) {
            rows.removeAll(claimed.keySet()); // stop renewing: the leases expire and the rows are claimed again
            throw e;
        }
        Set<Long> missing = new HashSet<>(claimed.keySet());
        outstanding.addAndGet(fetched.size());
        for (Fetched f : fetched) {
            missing.remove(f.id());
            int[] ad = claimed.get(f.id());
            submit(() -> {
                try {
                    runRow(f, ad[0], ad[1], ad[2]);
                } finally {
                    rows.remove(f.id());
                    outstanding.decrementAndGet();
                    if (policy != ConcurrencyPolicy.PARALLEL) {
                        rowsFirst = true;
                    }
                    wake();
                }
            });
        }
        // Rows whose message is gone (retention dropped it): nothing left to deliver.
        for (long id : missing) {
            writeRow(id, null, null, 0, 0, 0, null, null);
            rows.remove(id);
        }
        return claimed.size();
    }

    private void runRow(Fetched f, int attempt, int delays, int deferrals) {
        if (skip(f, bindings(f.id()))) {
            writeRow(f.id(), null, null, 0, 0, 0, null, null);
            return;
        }
        String key = f.messageKey();
        boolean keyed = policy != ConcurrencyPolicy.PARALLEL && key != null;
        if (keyed) {
            boolean free = db.transaction("take a key lease", c -> {
                Map<String, List<Fetched>> one = Map.of(key, List.of(f));
                Set<String> held = takeKeys(c, one);
                if (held.isEmpty()) {
                    return false;
                }
                if (policy == ConcurrencyPolicy.ORDERED && !blockedKeys(c, held, one, -1).isEmpty()) {
                    releaseKeys(c, held);
                    return false;
                }
                return true;
            });
            if (!free) {
                deferred.increment();
                writeRow(f.id(), "deferred", null, attempt - 1, delays,
                        Math.min(DEFER_RECHECK_MAX_SECONDS, DEFER_RECHECK_SECONDS * Math.pow(2, deferrals + 1)), null, null);
                return;
            }
        }
        try {
            Outcome out = deliver(f, attempt, delays);
            OutcomeRow row = outcomeRow(f, out, attempt, delays);
            if (row == null) {
                writeRow(f.id(), null, logMode == DeliveryLogMode.ALL ? "success" : null, attempt, delays, 0, null, null);
            } else {
                String event = logMode == DeliveryLogMode.OFF ? null
                        : out instanceof Outcome.Delay ? "delayed" : row.status().equals("dead") ? "dead" : "failed";
                writeRow(f.id(), row.status(), event, row.attempts(), row.delays(), row.afterSeconds(), row.error(), row.stack());
            }
        } finally {
            if (keyed) {
                db.transaction("release a key lease", c -> {
                    releaseKeys(c, Set.of(key));
                    wakeDeferred(c, Set.of(key));
                    return null;
                });
            }
        }
    }

    /** Writes an exception row's outcome under its lease: null status deletes it (resolved). */
    private void writeRow(long id, String status, String event, int attempts, int delays, double afterSeconds,
                          String error, String stack) {
        try {
            boolean ok = db.transaction("record an outcome", c -> {
                int n;
                if (status == null) {
                    try (PreparedStatement ps = c.prepareStatement(sql.exceptions.deleteRow)) {
                        ps.setLong(1, g.groupId());
                        ps.setLong(2, id);
                        ps.setObject(3, token);
                        n = ps.executeUpdate();
                    }
                } else {
                    try (PreparedStatement ps = c.prepareStatement(sql.exceptions.updateRow)) {
                        ps.setString(1, status);
                        ps.setInt(2, attempts);
                        ps.setInt(3, delays);
                        ps.setString(4, status);
                        ps.setDouble(5, afterSeconds);
                        ps.setString(6, error);
                        ps.setString(7, stack);
                        ps.setString(8, status);
                        ps.setLong(9, g.groupId());
                        ps.setLong(10, id);
                        ps.setObject(11, token);
                        n = ps.executeUpdate();
                    }
                }
                if (n == 0) {
                    return false;
                }
                if (event != null) {
                    insertEvents(c, List.of(new LogEvent(id, Math.max(0, attempts), event, error)));
                }
                return true;
            });
            if (!ok) {
                leasesLost.increment();
                log.warn("outcome refused, lease lost: group={} message={}", g.groupName(), id);
            }
        } catch (RuntimeException e) {
            warn("could not record an outcome; the message will be redelivered after its lease", e);
        }
    }

    // ------------------------------------------------------------------ delivery

    private boolean skip(Fetched f, Bindings b) {
        if (f.superseded()) {
            skippedSuperseded.increment();
            return true;
        }
        if (accept != null && !accept.contains(f.schemaVersion())) {
            skippedVersion.increment();
            return true;
        }
        if (!b.accepts(f.id(), f.routingKey())) {
            skippedFiltered.increment();
            return true;
        }
        return false;
    }

    private Outcome deliver(Fetched f, int attempt, int delays) {
        T payload;
        try {
            payload = serde.deserialize(f.payload());
        } catch (Exception e) {
            delivered.increment();
            return Outcome.terminal("undecodable payload (" + f.contentType() + "): " + e);
        }
        Message<T> m = new Message<>(f.id(), payload, f.messageKey(), f.routingKey(), headers(f.headersJson()),
                attempt, delays, f.createdAt(), f.schemaVersion());
        delivered.increment();
        try {
            Outcome out = handler.handle(m);
            return out == null ? Outcome.success() : out;
        } catch (Throwable e) {
            if (e instanceof Error && !(e instanceof AssertionError) && !(e instanceof StackOverflowError)) {
                log.error("handler threw an Error: group={} message={}", g.groupName(), f.id(), e);
            }
            return new Outcome.Retry(null, e);
        }
    }

    /** The exception row an outcome produces, or null for success. */
    private OutcomeRow outcomeRow(Fetched f, Outcome out, int attempt, int delays) {
        if (out instanceof Outcome.Success) {
            succeeded.increment();
            return null;
        }
        if (out instanceof Outcome.Delay d) {
            delayed.increment();
            return new OutcomeRow(f.id(), "ready", f.messageKey(), attempt - 1, delays + 1, seconds(d.after()), null, null);
        }
        if (out instanceof Outcome.Terminal term) {
            dead.increment();
            return new OutcomeRow(f.id(), "dead", f.messageKey(), attempt, delays, 0, ErrorText.clean(term.reason()), null);
        }
        // Cleaned here, before the row and its log event exist: a NUL would make the outcome write fail forever.
        Outcome.Retry r = (Outcome.Retry) out;
        String error = r.error() == null ? "retry requested" : ErrorText.of(r.error());
        String stack = r.error() == null ? null : ErrorText.stackTrace(r.error());
        if (attempt >= retry.maxAttempts()) {
            dead.increment();
            return new OutcomeRow(f.id(), "dead", f.messageKey(), attempt, delays, 0, error, stack);
        }
        retried.increment();
        Duration wait = r.after() != null ? r.after() : jittered(retry.backoff(attempt));
        return new OutcomeRow(f.id(), "ready", f.messageKey(), attempt, delays, seconds(wait), error, stack);
    }

    private Duration jittered(Duration d) {
        double factor = 1 - retry.jitter() * ThreadLocalRandom.current().nextDouble();
        return Duration.ofNanos((long) (d.toNanos() * factor));
    }

    private static double seconds(Duration d) {
        return d.toNanos() / 1e9;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, String> headers(String json) {
        if (json == null) {
            return Map.of();
        }
        try {
            return Collections.unmodifiableMap(JSON.readValue(json, LinkedHashMap.class));
        } catch (java.io.IOException e) {
            return Map.of();
        }
    }

    private static Instant deliverAt(Fetched f) {
        if (f.optionsJson() == null) {
            return null;
        }
        try {
            com.fasterxml.jackson.databind.JsonNode at = JSON.readTree(f.optionsJson()).get("deliver_at");
            return at == null || at.isNull() ? null : Instant.parse(at.asText());
        } catch (java.io.IOException | RuntimeException e) {
            return null;
        }
    }

    private static List<Fetched> read(PreparedStatement ps) throws SQLException {
        List<Fetched> out = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                out.add(fetched(rs, 0));
            }
        }
        return out;
    }

    /** One message from the columns of {@code MessageSql.FETCH_COLUMNS}, starting after column {@code offset}. */
    private static Fetched fetched(ResultSet rs, int offset) throws SQLException {
        long rank = rs.getLong(offset + 7);
        Long r = rs.wasNull() ? null : rank;
        return new Fetched(rs.getLong(offset + 1), rs.getTimestamp(offset + 2).toInstant(), rs.getInt(offset + 3),
                rs.getString(offset + 4), rs.getString(offset + 5), rs.getString(offset + 6), r, rs.getString(offset + 8),
                rs.getString(offset + 9), rs.getBytes(offset + 10), rs.getBoolean(offset + 11));
    }

    /**
     * The group's bindings, valid for message ids up to the head read with them: a binding change is
     * installed from the head at its registration onwards, so ids above the cached head need a fresh
     * read (and ids at or below it are classified exactly as before the change).
     */
    private Bindings bindings(long upToId) {
        Bindings b = bindings;
        if (b == null || upToId > bindingsValidThrough) {
            long[] head = new long[1];
            b = db.autoCommitReplayable("read bindings", c -> {
                List<Bindings.Entry> entries = new ArrayList<>();
                try (PreparedStatement ps = c.prepareStatement(sql.bindings.bindings)) {
                    ps.setLong(1, g.groupId());
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            long until = rs.getLong(3);
                            Long end = rs.wasNull() ? null : until;
                            entries.add(Bindings.entry(rs.getString(1), rs.getLong(2), end));
                            head[0] = rs.getLong(4);
                        }
                    }
                }
                if (entries.isEmpty()) {
                    try (PreparedStatement ps = c.prepareStatement(sql.messages.headQuery); ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        head[0] = rs.getLong(1);
                    }
                }
                return new Bindings(entries);
            });
            bindings = b;
            bindingsValidThrough = head[0];
        }
        return b;
    }

    private void submit(Runnable task) {
        executor.execute(() -> {
            boolean acquired = false;
            try {
                if (ownExecutor == null) {
                    slots.acquireUninterruptibly();
                    acquired = true;
                }
                task.run();
            } catch (RuntimeException e) {
                warn("handler task failed", e);
            } finally {
                if (acquired) {
                    slots.release();
                }
            }
        });
    }

    // ------------------------------------------------------------------ renewal and stop

    private void renew() {
        if (renewalSuspended) {
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
            if (lastRenewal != 0 && started - lastRenewal > o.leaseTimeout().toNanos() / 2) {
                // Renewals run every third of the lease: one this late means the process is starved (CPU, GC
                // pauses, a pool without free connections) and its leases are at risk of expiring under it.
                log.warn("lease renewal is late: group={} {} ms since the last one (lease {} ms)", g.groupName(),
                        TimeUnit.NANOSECONDS.toMillis(started - lastRenewal), o.leaseTimeout().toMillis());
            }
            db.transaction("renew leases", c -> {
                if (!open.isEmpty()) {
                    Set<Long> renewed = new HashSet<>();
                    try (PreparedStatement ps = c.prepareStatement(sql.ranges.renewRanges)) {
                        java.sql.Array ids = c.createArrayOf("int8", open.stream().map(w -> w.leaseId).toArray());
                        ps.setDouble(1, leaseSeconds);
                        ps.setArray(2, ids);
                        ps.setArray(3, c.createArrayOf("text", open.stream().map(w -> arrayText(w.resolved)).toArray()));
                        ps.setArray(4, ids);
                        ps.setObject(5, token);
                        try (ResultSet rs = ps.executeQuery()) {
                            while (rs.next()) {
                                renewed.add(rs.getLong(1));
                            }
                        }
                    }
                    for (RangeWork w : open) {
                        if (!renewed.contains(w.leaseId)) {
                            w.lost = true;
                            log.debug("range lease lost at renewal: group={} low={} high={}", g.groupName(), w.low, w.high);
                        }
                    }
                }
                if (!rowIds.isEmpty()) {
                    try (PreparedStatement ps = c.prepareStatement(sql.exceptions.renewRows)) {
                        ps.setDouble(1, leaseSeconds);
                        ps.setLong(2, g.groupId());
                        ps.setArray(3, c.createArrayOf("int8", rowIds.toArray()));
                        ps.setObject(4, token);
                        ps.executeQuery().close();
                    }
                }
                if (policy != ConcurrencyPolicy.PARALLEL) {
                    try (PreparedStatement ps = c.prepareStatement(sql.keys.renewKeys)) {
                        ps.setDouble(1, leaseSeconds);
                        ps.setLong(2, g.groupId());
                        ps.setObject(3, token);
                        ps.executeUpdate();
                    }
                }
                return null;
            });
            lastRenewal = System.nanoTime();
        } catch (RuntimeException e) {
            warn("lease renewal failed", e);
        }
    }

    private static String arrayText(Set<Long> ids) {
        StringBuilder b = new StringBuilder("{");
        for (Long id : ids) {
            if (b.length() > 1) {
                b.append(',');
            }
            b.append(id);
        }
        return b.append('}').toString();
    }

    private void warn(String what, Exception e) {
        long now = System.nanoTime();
        if (now - lastWarn > TimeUnit.SECONDS.toNanos(30)) {
            lastWarn = now;
            log.warn("{}: group={} error={}", what, g.groupName(), e.toString());
        }
    }

    @Override
    public ConsumptionStats stats() {
        return new ConsumptionStats(delivered.sum(), succeeded.sum(), retried.sum(), dead.sum(), delayed.sum(), deferred.sum(),
                skippedSuperseded.sum(), skippedVersion.sum(), skippedFiltered.sum(), rangesClaimed.sum(),
                rangesReclaimed.sum(), leasesLost.sum());
    }

    @Override
    public boolean running() {
        return running;
    }

    /** One release of {@link #close()}'s, in a transaction of its own. */
    private interface Release {
        void run(Connection c) throws SQLException;
    }

    /**
     * Runs a release of {@link #close()} with what is left until {@code deadline} as its statement timeout, so
     * a lock held on a lease row or a stalled server cannot hang close. False when not done (failed, or no
     * time left: the lease then expires by itself).
     */
    private boolean release(long deadline, String what, Release work) {
        long leftMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        if (leftMs <= 0) {
            return false;
        }
        try {
            db.transaction(what, c -> {
                try (PreparedStatement ps = c.prepareStatement(ConsumeSql.STATEMENT_TIMEOUT)) {
                    ps.setString(1, Long.toString(leftMs));
                    ps.execute();
                }
                work.run(c);
                return null;
            });
            return true;
        } catch (RuntimeException e) {
            warn("could not " + what + "; it is taken over when its lease expires", e);
            return false;
        }
    }

    @Override
    public synchronized void close() {
        if (!running) {
            return;
        }
        running = false;
        LockSupport.unpark(loop);
        try {
            loop.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (keyRetry != null) {
            keyRetry.shutdown();
            try {
                keyRetry.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            retryWaiting(); // not running any more: every waiting chain becomes deferred rows
        }
        long deadline = System.nanoTime() + o.shutdownTimeout().toNanos();
        while (outstanding.get() > 0 && System.nanoTime() < deadline) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
        // Whatever is still unfinished goes back at once, with what is resolved so far; a database that does
        // not answer stops this after RELEASE_LIMIT (what is left expires with its leases).
        long releaseDeadline = System.nanoTime() + RELEASE_LIMIT.toNanos();
        int left = 0;
        for (RangeWork w : new ArrayList<>(ranges.values())) {
            if (w.done) {
                continue;
            }
            w.done = true;
            left += release(releaseDeadline, "release a range", c -> {
                insertRows(c, w.rowsSnapshot());
                insertEvents(c, w.eventsSnapshot());
                releaseRange(c, w, w.resolvedWithRows());
            }) ? 0 : 1;
        }
        for (long id : new ArrayList<>(rows)) {
            left += release(releaseDeadline, "release a row", c -> {
                try (PreparedStatement ps = c.prepareStatement(sql.exceptions.releaseRow)) {
                    ps.setLong(1, g.groupId());
                    ps.setLong(2, id);
                    ps.setObject(3, token);
                    ps.executeUpdate();
                }
            }) ? 0 : 1;
        }
        if (policy != ConcurrencyPolicy.PARALLEL) {
            left += release(releaseDeadline, "release key leases", c -> {
                Set<String> keys = new HashSet<>();
                try (PreparedStatement ps = c.prepareStatement(sql.keys.releaseAllKeys)) {
                    ps.setLong(1, g.groupId());
                    ps.setObject(2, token);
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            keys.add(rs.getString(1));
                        }
                    }
                }
                if (!keys.isEmpty()) {
                    wakeDeferred(c, keys);
                }
            }) ? 0 : 1;
        }
        if (left > 0) {
            log.warn("close left {} releases undone; their leases expire by themselves: group={}", left, g.groupName());
        }
        ticker.shutdownNow();
        if (ownExecutor != null) {
            ownExecutor.shutdownNow();
        }
        if (wakeRegistration != null) {
            try {
                wakeRegistration.close();
            } catch (Exception ignored) {
                // nothing to release
            }
        }
        if (session != null) {
            try {
                // Wait, so an operator action right after close() sees the group as stopped.
                session.releasePresence(presenceKey).get(5, TimeUnit.SECONDS);
            } catch (Exception e) {
                warn("presence release not confirmed", e);
            }
        }
    }
}
