package dev.sluice.internal.maint;

import dev.sluice.StreamConfig;
import dev.sluice.StreamInfo;
import dev.sluice.SweepResult;
import dev.sluice.internal.catalog.StreamCatalog;
import dev.sluice.internal.consume.ConsumeSweeps;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.jdbc.ErrorText;
import dev.sluice.internal.jdbc.Identifiers;
import dev.sluice.internal.jdbc.SqlErrors;
import dev.sluice.internal.jdbc.SqlWork;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The janitor: one bounded pass of every stream sweep over every stream of a schema ({@link #sweep()}), as the
 * elected manager and {@code sluice.maintenance().runOnce()} run it. docs/maintenance.md describes each sweep.
 *
 * <p>Every delete moves at most {@link JanitorLimits#batchSize()} rows in its own auto-commit statement and a sweep repeats
 * full batches at most {@link JanitorLimits#maxRounds()} times per stream (or group) and pass; leftovers wait for the next
 * pass. Nothing here holds a transaction open across statements except a partition's DDL, which runs under a short
 * {@code lock_timeout} and is skipped (retried next pass) when the lock is busy.
 *
 * <p>Cost grows with work, not with the number of streams: a pass reads the stream list, every log's head (one
 * statement over {@code pg_sequences}) and the group list, and then touches a stream only when something of it can
 * be due. In memory, per stream (and per group for dead letters), the janitor remembers when the next row can
 * expire — the oldest remaining row's time plus its TTL — and, for partitions, the head and the coverage it last
 * saw; a stream is skipped until then. A fresh janitor handles every stream once. Calls are serialised.
 */
public final class Janitor {
    private static final Logger log = LoggerFactory.getLogger(Janitor.class);

    /** Creates missing log partitions ahead of each head; counts partitions created. */
    public static final String PARTITIONS_AHEAD = "partitions_ahead";
    /** Drops whole log partitions past the stream's retention; counts partitions dropped. */
    public static final String RETENTION = "retention";
    /** Deletes idempotency keys past the stream's TTL. */
    public static final String IDEMPOTENCY_KEYS = "idempotency_keys";
    /** Deletes empty compaction heads past the stream's TTL. */
    public static final String COMPACTION_HEADS = "compaction_heads";
    /** Deletes delivery-log events past the stream's delivery-log retention. */
    public static final String DELIVERY_LOG = "delivery_log";
    /** Deletes dead letters past their group's dead-letter retention. */
    public static final String DEAD_LETTERS = "dead_letters";
    /** The sweeps of a pass, in the order they run and are reported. */
    public static final List<String> SWEEPS = List.of(PARTITIONS_AHEAD, RETENTION, IDEMPOTENCY_KEYS, COMPACTION_HEADS,
            DELIVERY_LOG, DEAD_LETTERS);

    private final Db db;
    private final String schema;
    private final StreamCatalog streams;
    private final JanitorLimits limits;
    private final ConsumeSweeps.Groups groupsSql;
    /** Per stream id: its statements and what this janitor remembers of it. */
    private final Map<Long, StreamState> states = new HashMap<>();
    /** Per group id: when its next dead letter can be due. */
    private final Map<Long, SweepDue> deadLetterDue = new HashMap<>();
    private final Map<String, Long> lastWarned = new HashMap<>();

    /** No I/O. */
    public Janitor(Db db, String schema, StreamCatalog streams) {
        this(db, schema, streams, JanitorLimits.DEFAULT);
    }

    /** No I/O; {@code limits} bound each pass. */
    public Janitor(Db db, String schema, StreamCatalog streams, JanitorLimits limits) {
        this.db = db;
        this.schema = schema;
        this.streams = streams;
        this.limits = limits;
        this.groupsSql = new ConsumeSweeps.Groups(Identifiers.quote(schema));
    }

    /**
     * One bounded pass of every sweep over every stream of the schema: one result per name of {@link #SWEEPS}, in
     * that order. A failing sweep (or one stream failing within a sweep) is reported with its cleaned error and does
     * not stop the others; nothing is thrown.
     */
    public synchronized List<SweepResult> sweep() {
        long start = System.nanoTime();
        Pass pass;
        try {
            pass = readPass();
        } catch (RuntimeException e) {
            String error = clean(e.getMessage() == null ? e.toString() : e.getMessage());
            warn("pass", error, false);
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            List<SweepResult> out = new ArrayList<>();
            for (String name : SWEEPS) {
                out.add(new SweepResult(name, 0, took, error));
            }
            return out;
        }
        List<SweepResult> out = new ArrayList<>(SWEEPS.size());
        out.add(run(PARTITIONS_AHEAD, tally -> partitionsAhead(pass, tally)));
        out.add(run(RETENTION, tally -> retention(pass, tally)));
        out.add(run(IDEMPOTENCY_KEYS, tally -> perStream(pass, tally, "sweep idempotency keys", (s, st) -> ttl(st.keys,
                s.config().idempotencyKeyTtl(), pass.now, "sweep idempotency keys of stream '" + s.name() + "'",
                (c, n) -> st.produce.deleteExpiredKeys(c, s.config().idempotencyKeyTtl(), n), st.produce::oldestKey))));
        out.add(run(COMPACTION_HEADS, tally -> perStream(pass, tally, "sweep compaction heads", (s, st) -> ttl(st.heads,
                s.config().emptyCompactionHeadTtl(), pass.now, "sweep compaction heads of stream '" + s.name() + "'",
                (c, n) -> st.produce.deleteEmptyHeads(c, s.config().emptyCompactionHeadTtl(), n), st.produce::oldestEmptyHead))));
        out.add(run(DELIVERY_LOG, tally -> perStream(pass, tally, "sweep delivery log", (s, st) -> ttl(st.deliveryLog,
                s.config().deliveryLogRetention(), pass.now, "sweep the delivery log of stream '" + s.name() + "'",
                (c, n) -> st.consume.deleteOldDeliveryLog(c, s.config().deliveryLogRetention(), n), st.consume::oldestDeliveryLog))));
        out.add(run(DEAD_LETTERS, tally -> deadLetters(pass, tally)));
        return out;
    }

    /** The streams this pass works on, their heads and the database's clock. */
    private record Pass(Instant now, List<StreamInfo> streams, Map<Long, Long> heads) {
        long head(long streamId) {
            return heads.getOrDefault(streamId, 0L);
        }
    }

    private Pass readPass() {
        List<StreamInfo> all = streams.list();
        int code = streams.familyCodeVersion();
        List<StreamInfo> usable = new ArrayList<>();
        Set<Long> ids = new HashSet<>();
        for (StreamInfo s : all) {
            ids.add(s.id());
            // A family at another version than this code's is left alone: its statements may not fit it.
            if (s.familyVersion() == code) {
                usable.add(s);
            }
        }
        states.keySet().retainAll(ids);
        StreamHeads heads = db.read("read the heads of the stream logs", c -> StreamHeads.read(c, schema));
        return new Pass(heads.now(), usable, heads.heads());
    }

    // ----------------------------------------------------------------------------------------------- partitions ahead

    private void partitionsAhead(Pass pass, SweepTally tally) {
        boolean unknown = false;
        for (StreamInfo s : pass.streams) {
            unknown |= state(s).coveredUpTo < 0;
        }
        if (unknown) {
            // One catalog read for every stream this janitor has not seen yet (a fresh janitor: all of them).
            Map<Long, Long> coverage = db.read("read the partitions of the stream logs",
                    c -> Partitions.coverageOfSchema(c, schema));
            for (StreamInfo s : pass.streams) {
                StreamState st = state(s);
                if (st.coveredUpTo < 0) {
                    st.coveredUpTo = coverage.getOrDefault(s.id(), 0L);
                }
            }
        }
        for (StreamInfo s : pass.streams) {
            StreamState st = state(s);
            long head = pass.head(s.id());
            if (st.aheadHead == head) {
                continue; // the head has not moved since this janitor last handled the stream
            }
            long size = s.config().partitionSize();
            if (st.coveredUpTo >= requiredCoverage(head, size)) {
                st.aheadHead = head;
                continue;
            }
            try {
                long[] done = ddl("create partitions of stream '" + s.name() + "'", c -> {
                    Partitions.lock(c, schema, s.id());
                    long current = Math.max(head, Partitions.head(c, st.tables));
                    int created = Partitions.ensureAhead(c, st.tables, size, current);
                    return new long[] {created, Partitions.coveredUpTo(c, st.tables)};
                });
                if (done == null) {
                    log.debug("partitions ahead: lock busy, retried next pass: stream={} stream_id={}", s.name(), s.id());
                    continue;
                }
                tally.removed += done[0];
                st.coveredUpTo = done[1];
                st.aheadHead = head;
                if (done[0] > 0) {
                    log.info("created log partitions ahead: stream={} stream_id={} created={} covered_up_to={}",
                            s.name(), s.id(), done[0], done[1]);
                }
            } catch (RuntimeException e) {
                if (!notPermitted(e)) {
                    tally.fail(s, e);
                    continue;
                }
                // A runtime role may not run DDL: not a failure of the pass. Tried again once the head moves.
                st.aheadHead = head;
                tally.skip(s, "this database user may not create log partitions; run 'sluice stream extend-partitions "
                        + s.name() + " --ahead N' (or 'sluice maintenance run') as the migration role");
            }
        }
    }

    /** The exclusive upper id bound the partitions must reach for a head: its partition and the room kept ahead. */
    static long requiredCoverage(long head, long size) {
        long last = Math.max(0, head) / size + Partitions.minimumAhead(size);
        try {
            return Math.multiplyExact(Math.addExact(last, 1), size);
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    // ------------------------------------------------------------------------------------------------------- retention

    private void retention(Pass pass, SweepTally tally) {
        for (StreamInfo s : pass.streams) {
            StreamState st = state(s);
            StreamConfig config = s.config();
            if (config.retention() == null) {
                st.retention = null;
                continue;
            }
            long head = pass.head(s.id());
            if (st.retention != null && st.retention.skips(config, pass.now, head)) {
                continue;
            }
            try {
                tally.removed += new Retention(db, s, st, limits).run(head, pass.now);
            } catch (RuntimeException e) {
                st.retention = null;
                if (notPermitted(e)) {
                    // Dropping a partition needs the log's owner; the owner's own pass (or the manager's) does it.
                    tally.skip(s, "this database user may not drop log partitions (it does not own the log); run"
                            + " 'sluice maintenance run' as the migration role, or let a manager of that role run");
                } else {
                    tally.fail(s, e);
                }
            }
        }
    }

    // ---------------------------------------------------------------------------------------------------- TTL sweeps

    /** One batch of a TTL sweep: deletes at most {@code limit} rows. */
    @FunctionalInterface
    interface Delete {
        int apply(Connection c, int limit) throws SQLException;
    }

    /** The time of the oldest remaining row of a TTL sweep. */
    @FunctionalInterface
    interface Oldest {
        Optional<Instant> apply(Connection c) throws SQLException;
    }

    /**
     * A TTL sweep of one table (or one group's rows): skipped while {@code due} says nothing can have expired;
     * otherwise full batches up to the round limit, then the oldest remaining row's time plus the TTL is the next due
     * time (now plus the TTL when none remains; now when the rounds ran out).
     */
    private long ttl(SweepDue due, Duration ttl, Instant now, String what, Delete delete, Oldest oldest) {
        if (due.skips(ttl, now)) {
            return 0;
        }
        return db.autoCommit(what, c -> {
            if (!due.known(ttl)) {
                // First look at this table: one min() over its index says whether anything is due at all.
                Optional<Instant> first = oldest.apply(c);
                Instant at = first.map(t -> t.plus(ttl)).orElse(now.plus(ttl));
                if (at.isAfter(now)) {
                    due.set(ttl, at);
                    return 0L;
                }
            }
            long removed = 0;
            for (int round = 0; round < limits.maxRounds(); round++) {
                int n = delete.apply(c, limits.batchSize());
                removed += n;
                if (n < limits.batchSize()) {
                    due.set(ttl, oldest.apply(c).map(t -> t.plus(ttl)).orElse(now.plus(ttl)));
                    return removed;
                }
            }
            due.set(ttl, now); // leftovers: the next pass goes on
            return removed;
        });
    }

    private void deadLetters(Pass pass, SweepTally tally) {
        List<ConsumeSweeps.GroupRetention> groups = db.read("list consumer groups", groupsSql::list);
        Map<Long, StreamInfo> byId = new HashMap<>();
        for (StreamInfo s : pass.streams) {
            byId.put(s.id(), s);
        }
        Set<Long> seen = new HashSet<>();
        for (ConsumeSweeps.GroupRetention g : groups) {
            StreamInfo s = byId.get(g.streamId());
            if (s == null) {
                continue;
            }
            seen.add(g.groupId());
            StreamState st = state(s);
            SweepDue due = deadLetterDue.computeIfAbsent(g.groupId(), k -> new SweepDue());
            try {
                long n = ttl(due, g.deadLetterRetention(), pass.now, "sweep dead letters of group '" + g.name() + "' of stream '"
                        + s.name() + "'", (c, limit) -> st.consume.deleteOldDeadLetters(c, g.groupId(), g.deadLetterRetention(), limit),
                        c -> st.consume.oldestDeadLetter(c, g.groupId()));
                tally.removed += n;
                if (n > 0) {
                    st.retention = null; // a dead letter kept its partition: retention looks again
                }
            } catch (RuntimeException e) {
                tally.fail(s, e);
            }
        }
        deadLetterDue.keySet().retainAll(seen);
    }

    // --------------------------------------------------------------------------------------------------------- plumbing

    /** Runs one sweep body of a stream. */
    @FunctionalInterface
    private interface StreamSweep {
        long run(StreamInfo s, StreamState st);
    }

    private void perStream(Pass pass, SweepTally tally, String what, StreamSweep sweep) {
        for (StreamInfo s : pass.streams) {
            try {
                tally.removed += sweep.run(s, state(s));
            } catch (RuntimeException e) {
                tally.fail(s, e);
            }
        }
    }

    @FunctionalInterface
    private interface Body {
        void run(SweepTally tally);
    }

    private SweepResult run(String name, Body body) {
        long start = System.nanoTime();
        SweepTally tally = new SweepTally();
        try {
            body.run(tally);
        } catch (RuntimeException e) {
            tally.fail(null, e);
        }
        String error = tally.error();
        if (error != null) {
            warn(name, error, false);
        }
        String skipped = tally.skipped();
        if (skipped != null) {
            warn(name, skipped, true);
        }
        return new SweepResult(name, tally.removed, Duration.ofNanos(System.nanoTime() - start), error, skipped);
    }

    /** Whether a failure is PostgreSQL refusing a privilege (42501) rather than something a retry may fix. */
    private static boolean notPermitted(RuntimeException e) {
        return e instanceof dev.sluice.SluiceException se && se.code() == dev.sluice.ErrorCode.PERMISSION_DENIED;
    }

    /** Error text as a result carries it: cleaned ({@link ErrorText}) and on one line. */
    static String clean(String text) {
        String t = ErrorText.clean(text);
        return t == null ? null : t.replace("\r\n", " ").replace('\n', ' ').replace('\r', ' ');
    }

    /** A warning per sweep (and kind) at most once a minute: a pass runs every few seconds. */
    private void warn(String sweep, String error, boolean skipped) {
        long now = System.nanoTime();
        String key = skipped ? sweep + "/skipped" : sweep;
        Long last = lastWarned.get(key);
        if (last == null || now - last > 60_000_000_000L) {
            lastWarned.put(key, now);
            if (skipped) {
                log.warn("maintenance sweep skipped work this database user may not do: sweep={} schema={} reason={}",
                        sweep, schema, error);
            } else {
                log.warn("maintenance sweep failed: sweep={} schema={} error={}", sweep, schema, error);
            }
        }
    }

    private StreamState state(StreamInfo s) {
        return states.computeIfAbsent(s.id(), id -> new StreamState(streams.quotedSchema(), id));
    }

    /**
     * Runs DDL in one short transaction of its own: {@code lock_timeout} bounds every lock wait, and a busy lock
     * (or a deadlock) is not replayed — returns null, and the next pass tries again.
     */
    <T> T ddl(String what, SqlWork<T> work) {
        return once(db, what, limits.lockTimeout(), work);
    }

    /** {@link #ddl} for any caller of this package. */
    static <T> T once(Db db, String what, Duration lockTimeout, SqlWork<T> work) {
        return db.autoCommit(what, c -> {
            c.setAutoCommit(false);
            try {
                try (PreparedStatement ps = c.prepareStatement("SELECT set_config('lock_timeout', ?, true)")) {
                    ps.setString(1, lockTimeout.toMillis() + "ms");
                    ps.execute();
                }
                T result = work.run(c);
                Db.commit(c, what);
                return result;
            } catch (SQLException e) {
                c.rollback();
                if (SqlErrors.LOCK_NOT_AVAILABLE.equals(e.getSQLState()) || SqlErrors.DEADLOCK_DETECTED.equals(e.getSQLState())) {
                    return null;
                }
                throw e;
            } catch (RuntimeException e) {
                c.rollback();
                throw e;
            } finally {
                try {
                    c.setAutoCommit(true);
                } catch (SQLException e) {
                    // a broken connection: the pool finds out; the work's own outcome stands
                }
            }
        });
    }

    // ------------------------------------------------------------------------------------------------- for the tests

    /**
     * What this janitor remembers of a stream, for tests and diagnostics: whether each sweep would skip it in a pass
     * at {@code now} with its current head {@code head} (its config as given). Empty when it has not handled the
     * stream yet.
     */
    public synchronized Optional<Skips> skips(StreamInfo s, long head, Instant now) {
        StreamState st = states.get(s.id());
        if (st == null) {
            return Optional.empty();
        }
        StreamConfig c = s.config();
        return Optional.of(new Skips(st.aheadHead == head,
                c.retention() == null || (st.retention != null && st.retention.skips(c, now, head)),
                st.keys.skips(c.idempotencyKeyTtl(), now), st.heads.skips(c.emptyCompactionHeadTtl(), now),
                st.deliveryLog.skips(c.deliveryLogRetention(), now)));
    }

    /** Which sweeps would skip a stream ({@link #skips}). */
    public record Skips(boolean partitionsAhead, boolean retention, boolean idempotencyKeys, boolean compactionHeads,
                        boolean deliveryLog) {
        /** Whether every stream sweep would skip it. */
        public boolean all() {
            return partitionsAhead && retention && idempotencyKeys && compactionHeads && deliveryLog;
        }
    }
}
