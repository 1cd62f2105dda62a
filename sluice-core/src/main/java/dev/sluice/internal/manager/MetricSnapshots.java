package dev.sluice.internal.manager;

import dev.sluice.GroupInfo;
import dev.sluice.MetricSnapshot;
import dev.sluice.QueueInfo;
import dev.sluice.StreamInfo;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.jdbc.Sql;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Owner of {@code metric_snapshot}: per stream, group and queue the newest figures (lag, backlog, dead letters,
 * queue depths, rates), written by the manager in one statement per pass, so readers never count big tables.
 *
 * <p>Cost grows with work: the heads of every stream come from one catalog read, and a stream whose head did
 * not move and whose groups were all caught up with nothing retrying is not read again, except on every
 * {@link #FULL_EVERY}-th pass (which also drops the rows of streams and groups that are gone). {@link #current()} takes the
 * same figures in full without writing them (a client's gauges while no manager is live).
 */
final class MetricSnapshots {
    /** Every this many passes every stream is read, idle or not. */
    static final int FULL_EVERY = 10;

    private final Db db;
    private final String schema;
    private final String upsert;
    private final String dropStale;
    private final String list;
    private final Supplier<List<StreamInfo>> streams;
    private final Function<StreamInfo, List<GroupInfo>> groups;
    private final Supplier<List<QueueInfo>> queues;
    /** Per stream id: the head at its last snapshot, when nothing of it was moving then (else absent). */
    private final Map<Long, Long> quiet = new HashMap<>();
    private int passes;

    MetricSnapshots(Db db, String schema, String q, Supplier<List<StreamInfo>> streams,
                    Function<StreamInfo, List<GroupInfo>> groups, Supplier<List<QueueInfo>> queues) {
        this.db = db;
        this.streams = streams;
        this.groups = groups;
        this.queues = queues;
        String table = q + ".metric_snapshot";
        this.upsert = """
                INSERT INTO %1$s AS m (kind, name, taken_at, head, committed, lag, backlog, retrying, dead, pending, processing)
                SELECT t.kind, t.name, now(), t.head, t.committed, t.lag, t.backlog, t.retrying, t.dead, t.pending, t.processing
                FROM unnest(?::text[], ?::text[], ?::int8[], ?::int8[], ?::int8[], ?::int8[], ?::int8[], ?::int8[], ?::int8[], ?::int8[])
                    AS t(kind, name, head, committed, lag, backlog, retrying, dead, pending, processing)
                ON CONFLICT (kind, name) DO UPDATE SET taken_at = EXCLUDED.taken_at, head = EXCLUDED.head,
                    committed = EXCLUDED.committed, lag = EXCLUDED.lag, backlog = EXCLUDED.backlog,
                    retrying = EXCLUDED.retrying, dead = EXCLUDED.dead, pending = EXCLUDED.pending,
                    processing = EXCLUDED.processing,
                    rate_per_s = CASE WHEN EXCLUDED.taken_at > m.taken_at THEN
                        (CASE m.kind WHEN 'stream' THEN EXCLUDED.head - m.head WHEN 'group' THEN EXCLUDED.committed - m.committed END)
                        / extract(epoch FROM EXCLUDED.taken_at - m.taken_at)::float8 END
                """.formatted(table);
        // Rows of kinds refreshed in full this pass that it did not touch: streams, groups or queues that are gone.
        this.dropStale = "DELETE FROM " + table + " WHERE kind = ANY (?::text[]) AND NOT (kind || ':' || name = ANY (?::text[]))";
        this.list = "SELECT kind, name, taken_at, head, committed, lag, backlog, retrying, dead, pending, processing, rate_per_s FROM "
                + table + " ORDER BY kind, name";
        this.schema = schema;
    }

    /** Takes the pass's snapshots; returns how many rows it wrote. */
    long take() {
        boolean full = passes++ % FULL_EVERY == 0;
        Rows rows = collect(full, true);
        String[] kinds = full ? new String[] {"stream", "group", "queue"} : new String[] {"queue"};
        return db.autoCommit("write metric snapshots", c -> {
            int n = rows.size() == 0 ? 0 : Sql.update(c, upsert, rows.kind(), rows.name(), rows.col(0), rows.col(1),
                    rows.col(2), rows.col(3), rows.col(4), rows.col(5), rows.col(6), rows.col(7));
            Sql.update(c, dropStale, Sql.array("text", kinds), Sql.array("text", rows.seen));
            return (long) n;
        });
    }

    /**
     * The figures of every stream, group and queue now, taken with the same reads as a pass (in full) and not written:
     * for a client's gauges while no manager is live ({@code internal.metrics.MeterRefresh}). Leaves the pass's memory
     * of quiet streams alone.
     */
    List<MetricSnapshot> current() {
        return collect(true, false).snapshots(Instant.now());
    }

    /**
     * The rows of every stream (only those not quiet unless {@code full}), their groups and every queue;
     * {@code remember}: update which streams are quiet (the pass's own reads only).
     */
    private Rows collect(boolean full, boolean remember) {
        dev.sluice.internal.maint.StreamHeads headNow = db.read("read stream heads",
                c -> dev.sluice.internal.maint.StreamHeads.read(c, schema));
        Rows rows = new Rows();
        for (StreamInfo s : streams.get()) {
            long head = headNow.of(s.id());
            Long quietHead = quiet.get(s.id());
            if (!full && quietHead != null && quietHead == head) {
                continue;
            }
            rows.add("stream", s.name(), head, null, null, null, null, null, null, null);
            boolean moving = false;
            for (GroupInfo g : groups.apply(s)) {
                long retrying = g.ready() + g.deferred() + g.inflight();
                rows.add("group", s.name() + "/" + g.name(), g.head(), g.committed(), g.lag(), Math.max(0, g.head() - g.claimed()),
                        retrying, g.dead(), null, null);
                moving |= g.lag() > 0 || retrying > 0 || g.openRanges() > 0;
            }
            if (remember && moving) {
                quiet.remove(s.id());
            } else if (remember) {
                quiet.put(s.id(), head);
            }
        }
        for (QueueInfo q : queues.get()) {
            rows.add("queue", q.name(), null, null, null, null, null, q.dead(), q.pending(), q.processing());
        }
        return rows;
    }

    /** Every snapshot, by kind and name. */
    List<MetricSnapshot> list() {
        return db.read("read metric snapshots", c -> Sql.list(c, list, rs -> new MetricSnapshot(rs.getString(1),
                rs.getString(2), rs.getTimestamp(3).toInstant(), num(rs, 4), num(rs, 5), num(rs, 6), num(rs, 7), num(rs, 8),
                num(rs, 9), num(rs, 10), num(rs, 11), rs.getObject(12) == null ? null : rs.getDouble(12))));
    }

    private static Long num(ResultSet rs, int i) throws SQLException {
        long v = rs.getLong(i);
        return rs.wasNull() ? null : v;
    }

    /** The rows of one pass, column by column (arrays for one unnest). */
    private static final class Rows {
        private final List<String> kinds = new ArrayList<>();
        private final List<String> names = new ArrayList<>();
        private final List<List<Long>> cols = new ArrayList<>();
        /** {@code kind:name} of every row, for the delete of rows no longer seen. */
        final List<String> seen = new ArrayList<>();

        Rows() {
            for (int i = 0; i < 8; i++) {
                cols.add(new ArrayList<>());
            }
        }

        void add(String kind, String name, Long... values) {
            kinds.add(kind);
            names.add(name);
            seen.add(kind + ":" + name);
            for (int i = 0; i < 8; i++) {
                cols.get(i).add(values[i]);
            }
        }

        /** The rows as snapshots taken at {@code at} (no rate: there is no previous one). */
        List<MetricSnapshot> snapshots(Instant at) {
            List<MetricSnapshot> out = new ArrayList<>(size());
            for (int i = 0; i < size(); i++) {
                out.add(new MetricSnapshot(kinds.get(i), names.get(i), at, value(0, i), value(1, i), value(2, i), value(3, i),
                        value(4, i), value(5, i), value(6, i), value(7, i), null));
            }
            return out;
        }

        private Long value(int col, int row) {
            return cols.get(col).get(row);
        }

        int size() {
            return kinds.size();
        }

        Sql.Array kind() {
            return Sql.array("text", kinds);
        }

        Sql.Array name() {
            return Sql.array("text", names);
        }

        Sql.Array col(int i) {
            return Sql.array("int8", cols.get(i));
        }
    }
}
