package dev.sluice.internal.schedule;

import dev.sluice.EnqueueOptions;
import dev.sluice.ErrorCode;
import dev.sluice.ProduceOptions;
import dev.sluice.Produced;
import dev.sluice.Producer;
import dev.sluice.QueueOptions;
import dev.sluice.ScheduleFire;
import dev.sluice.ScheduleInfo;
import dev.sluice.ScheduleSpec;
import dev.sluice.Serde;
import dev.sluice.SluiceException;
import dev.sluice.internal.catalog.Names;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.notify.Channels;
import dev.sluice.internal.queue.JobEncoder;
import dev.sluice.internal.queue.JobStore;
import dev.sluice.internal.schema.Migrator;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Schedules of one installation schema: registration, reads, suspend/resume, run-now, destroy, and the
 * runners' fire step ({@link #tick}). A fire is produced (stream target) or enqueued (queue target) on the
 * same connection and in the same transaction that moves the cursor on, with a key derived from the
 * schedule and the due time. See docs/schedules.md.
 */
public final class ScheduleStore {
    /** How a stream producer for one content type is made (the client's own producers, so it closes them). */
    public interface Producers {
        /** A producer of raw bytes for {@code stream} whose messages carry the serde's content type. */
        Producer<byte[]> create(String stream, Serde<byte[]> serde);
    }

    /** What one runner step did: fired one schedule (maybe several due times), or found nothing due. */
    public record Tick(List<ScheduleFire> fired, long dropped, Instant nextDueAt, Instant now) {
    }

    /** A fire of one schedule failed; the runner backs off that schedule alone. */
    public static final class FireFailed extends RuntimeException {
        private final long scheduleId;
        private final String schedule;

        FireFailed(long scheduleId, String schedule, RuntimeException cause) {
            super("firing schedule '" + schedule + "' failed: " + cause.getMessage(), cause);
            this.scheduleId = scheduleId;
            this.schedule = schedule;
        }

        /** The id of the schedule whose fire failed. */
        public long scheduleId() {
            return scheduleId;
        }

        /** The name of the schedule whose fire failed. */
        public String schedule() {
            return schedule;
        }
    }

    private record Row(long id, String name, ScheduleSpec spec, boolean suspended, Instant next, Instant last,
                       Instant lastFired, long fires, Instant createdAt, Instant updatedAt) {
        ScheduleInfo info() {
            return new ScheduleInfo(name, spec, suspended, next, last, lastFired, fires, createdAt, updatedAt);
        }
    }

    private final Db db;
    private final String schema;
    private final Migrator migrator;
    private final JobStore jobs;
    private final Producers producerFactory;
    private final ScheduleSql sql;
    private final String channel;
    private final Map<String, Producer<byte[]>> producers = new ConcurrentHashMap<>();
    private final Map<String, JobEncoder<byte[]>> encoders = new ConcurrentHashMap<>();
    private final Map<String, DueTimes> dueTimes = new ConcurrentHashMap<>();

    /** The store of one installation schema (statement texts built here, once). */
    public ScheduleStore(Db db, String schema, Migrator migrator, JobStore jobs, Producers producers) {
        this.db = db;
        this.schema = schema;
        this.migrator = migrator;
        this.jobs = jobs;
        this.producerFactory = producers;
        this.sql = new ScheduleSql(schema);
        this.channel = Channels.forSchema(schema);
    }

    /** The notification payload that wakes runners (see {@link dev.sluice.internal.notify.ClientSession#onWake(String, Runnable)}). */
    public static String wakeKey() {
        return ScheduleSql.WAKE_KEY;
    }

    /** The key of the fire for one due time. */
    public static String key(String schedule, Instant due) {
        return "schedule:" + schedule + ":" + due;
    }

    // ------------------------------------------------------------------ catalog

    /**
     * Creates the schedule, or replaces the spec of the existing one (its suspended state is kept; its
     * cursor is recomputed from now only when the expression or zone changed). Installs or migrates the
     * control plane like stream registration, under the schema lock, in one transaction.
     */
    public ScheduleInfo register(String name, ScheduleSpec spec, boolean allowMigrate) {
        Names.validate("schedule", name);
        ScheduleInfo info = db.transaction("register schedule '" + name + "'", c -> {
            migrator.lockSchema(c);
            migrator.ensureSystem(c, allowMigrate);
            Long streamId = null;
            String queue = null;
            int limit;
            if (spec.target().kind() == ScheduleSpec.Target.Kind.STREAM) {
                try (PreparedStatement ps = c.prepareStatement(sql.stream)) {
                    ps.setString(1, spec.target().name());
                    try (ResultSet rs = ps.executeQuery()) {
                        if (!rs.next()) {
                            throw new SluiceException(ErrorCode.STREAM_NOT_FOUND, "schedule '" + name + "' targets stream '"
                                    + spec.target().name() + "', which does not exist");
                        }
                        streamId = rs.getLong(1);
                        limit = rs.getInt(2);
                    }
                }
            } else {
                queue = spec.target().name();
                limit = QueueOptions.defaults().maxPayloadBytes();
            }
            if (spec.payload().length > limit) {
                throw new SluiceException(ErrorCode.PAYLOAD_TOO_LARGE, "the schedule payload is " + spec.payload().length
                        + " bytes; " + spec.target() + " accepts at most " + limit);
            }
            Optional<Row> existing = select(c, name, true);
            Instant now = now(c);
            long id;
            if (existing.isEmpty()) {
                try (PreparedStatement ps = c.prepareStatement(sql.insertConfig)) {
                    ps.setString(1, name);
                    bindSpec(ps, 2, streamId, queue, spec);
                    try (ResultSet rs = ps.executeQuery()) {
                        if (!rs.next()) {
                            throw new IllegalStateException("the control plane has no system row");
                        }
                        id = rs.getLong(1);
                    }
                }
                try (PreparedStatement ps = c.prepareStatement(sql.insertCursor)) {
                    ps.setLong(1, id);
                    ps.setObject(2, ts(times(spec).nextAfter(now)), java.sql.Types.TIMESTAMP_WITH_TIMEZONE);
                    ps.executeUpdate();
                }
            } else {
                Row row = existing.get();
                id = row.id();
                try (PreparedStatement ps = c.prepareStatement(sql.updateConfig)) {
                    int next = bindSpec(ps, 1, streamId, queue, spec);
                    ps.setLong(next, id);
                    ps.executeUpdate();
                }
                boolean timingChanged = !row.spec().expression().equals(spec.expression()) || !row.spec().zone().equals(spec.zone());
                if (timingChanged) {
                    moveCursor(c, id, times(spec).nextAfter(now));
                }
            }
            wake(c);
            return select(c, name, false).orElseThrow().info();
        });
        return info;
    }

    /** The schedule, or empty when it (or the control plane) does not exist. */
    public Optional<ScheduleInfo> get(String name) {
        Names.validate("schedule", name);
        return db.read("read schedule '" + name + "'", c -> {
            if (!systemReadable(c)) {
                return Optional.empty();
            }
            return select(c, name, false).map(Row::info);
        });
    }

    /** Every schedule of the schema by name; empty when the control plane is not installed. */
    public List<ScheduleInfo> list() {
        return db.read("list schedules", c -> {
            List<ScheduleInfo> out = new ArrayList<>();
            if (!systemReadable(c)) {
                return out;
            }
            try (PreparedStatement ps = c.prepareStatement(sql.selectAll); ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(row(rs).info());
                }
            }
            return out;
        });
    }

    /** Suspends the schedule: runners skip it until {@link #resume}. */
    public ScheduleInfo suspend(String name) {
        Names.validate("schedule", name);
        return db.transaction("suspend schedule '" + name + "'", c -> {
            requireSystem(c);
            setSuspended(c, name, true);
            return select(c, name, false).orElseThrow().info();
        });
    }

    /**
     * Resumes a suspended schedule: due times missed while suspended are dropped, the next due time is the
     * first after now. Resuming a schedule that is not suspended changes nothing.
     */
    public ScheduleInfo resume(String name) {
        Names.validate("schedule", name);
        return db.transaction("resume schedule '" + name + "'", c -> {
            requireSystem(c);
            Row row = select(c, name, true).orElseThrow(() -> notFound(name));
            if (row.suspended()) {
                setSuspended(c, name, false);
                moveCursor(c, row.id(), times(row.spec()).nextAfter(now(c)));
                wake(c);
            }
            return select(c, name, false).orElseThrow().info();
        });
    }

    /** Deletes the schedule and its cursor. */
    public void destroy(String name) {
        Names.validate("schedule", name);
        db.transaction("destroy schedule '" + name + "'", c -> {
            requireSystem(c);
            try (PreparedStatement ps = c.prepareStatement(sql.delete)) {
                ps.setString(1, name);
                if (ps.executeUpdate() == 0) {
                    throw notFound(name);
                }
            }
            return null;
        });
    }

    /**
     * Fires the schedule once now, also when it is suspended, under a key of its own; the cursor's next due
     * time does not move. Locks the cursor row, so it never overlaps a runner's fire of the same schedule.
     */
    public ScheduleFire runNow(String name) {
        Names.validate("schedule", name);
        return db.transaction("run schedule '" + name + "' now", c -> {
            requireSystem(c);
            Row row = select(c, name, true).orElseThrow(() -> notFound(name));
            Instant at;
            try (PreparedStatement ps = c.prepareStatement(sql.countRunNow)) {
                ps.setLong(1, row.id());
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    at = rs.getTimestamp(1).toInstant();
                }
            }
            return fire(c, row, at, "schedule:" + name + ":now:" + at);
        });
    }

    // ------------------------------------------------------------------ the runners' step

    /**
     * Fires the earliest due schedule that nobody else is firing (skipping {@code excluded} ids): its missed
     * due times after the misfire policy, in one transaction with the cursor move. When nothing is due, returns
     * the earliest next due time instead (and the database's now).
     *
     * @throws FireFailed when producing or enqueueing the fire failed (the transaction rolled back)
     */
    public Tick tick(long[] excluded) {
        return db.transaction("fire due schedules", c -> {
            Long[] skip = new Long[excluded.length];
            for (int i = 0; i < excluded.length; i++) {
                skip[i] = excluded[i];
            }
            Row row;
            Instant now;
            try (PreparedStatement ps = c.prepareStatement(sql.claimDue)) {
                ps.setArray(1, c.createArrayOf("bigint", skip));
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        row = null;
                        now = null;
                    } else {
                        row = row(rs);
                        now = rs.getTimestamp(18).toInstant();
                    }
                }
            }
            if (row == null) {
                try (PreparedStatement ps = c.prepareStatement(sql.nextDue)) {
                    ps.setArray(1, c.createArrayOf("bigint", skip));
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        Timestamp next = rs.getTimestamp(1);
                        return new Tick(List.of(), 0, next == null ? null : next.toInstant(), rs.getTimestamp(2).toInstant());
                    }
                }
            }
            DueTimes times = times(row.spec());
            int max = row.spec().misfire().maxFires();
            List<Instant> due = times.missed(row.next(), now, max);
            long dropped = due.size() < max ? 0 : countDropped(times, row.next(), due.get(0));
            List<ScheduleFire> fired = new ArrayList<>(due.size());
            try {
                for (Instant d : due) {
                    fired.add(fire(c, row, d, key(row.name(), d)));
                }
            } catch (RuntimeException e) {
                throw new FireFailed(row.id(), row.name(), e);
            }
            Instant last = due.isEmpty() ? row.last() : due.get(due.size() - 1);
            Instant next = times.nextAfter(now);
            try (PreparedStatement ps = c.prepareStatement(sql.advanceCursor)) {
                ps.setObject(1, ts(next), java.sql.Types.TIMESTAMP_WITH_TIMEZONE);
                ps.setObject(2, ts(last), java.sql.Types.TIMESTAMP_WITH_TIMEZONE);
                ps.setLong(3, fired.size());
                ps.setLong(4, row.id());
                ps.executeUpdate();
            }
            return new Tick(fired, dropped, next, now);
        });
    }

    /** How many due times in {@code [from, firstKept)} were dropped (for cron counted up to 1000, for the log). */
    private static long countDropped(DueTimes times, Instant from, Instant firstKept) {
        if (times.interval() != null) {
            return java.time.Duration.between(from, firstKept).getSeconds() / times.interval().getSeconds();
        }
        long n = 0;
        for (Instant t = times.nextAfter(from.minusNanos(1_000)); t != null && t.isBefore(firstKept) && n < 1_000;
             t = times.nextAfter(t)) {
            n++;
        }
        return n;
    }

    private ScheduleFire fire(Connection c, Row row, Instant due, String key) {
        ScheduleSpec spec = row.spec();
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("sluice-schedule", row.name());
        headers.put("sluice-due-at", due.toString());
        if (spec.target().kind() == ScheduleSpec.Target.Kind.STREAM) {
            Producer<byte[]> p = producer(spec.target().name(), spec.contentType());
            Produced r = p.produceInTransaction(c, spec.payload(),
                    ProduceOptions.builder().idempotencyKey(key).headers(headers).build());
            return new ScheduleFire(row.name(), spec.target(), due, key, r.id(), r.duplicate());
        }
        JobEncoder<byte[]> encoder = encoders.computeIfAbsent(spec.contentType(),
                ct -> new JobEncoder<>(bytesAs(ct), QueueOptions.defaults()));
        long id = jobs.enqueueOn(c, spec.target().name(),
                List.of(encoder.encode(spec.payload(), EnqueueOptions.builder().uniqueKey(key).headers(headers).build())),
                true).get(0);
        return new ScheduleFire(row.name(), spec.target(), due, key, id, false);
    }

    private Producer<byte[]> producer(String stream, String contentType) {
        String k = stream + "\n" + contentType;
        return producers.computeIfAbsent(k, x -> producerFactory.create(stream, bytesAs(contentType)));
    }

    /** Raw bytes stored under a given content type. */
    public static Serde<byte[]> bytesAs(String contentType) {
        return new Serde<>() {
            @Override
            public byte[] serialize(byte[] payload) {
                return payload;
            }

            @Override
            public byte[] deserialize(byte[] bytes) {
                return bytes;
            }

            @Override
            public String contentType() {
                return contentType;
            }
        };
    }

    // ------------------------------------------------------------------ helpers

    private DueTimes times(ScheduleSpec spec) {
        return dueTimes.computeIfAbsent(spec.expression() + "\n" + spec.zone(), k -> DueTimes.parse(spec.expression(), spec.zone()));
    }

    private int bindSpec(PreparedStatement ps, int i, Long streamId, String queue, ScheduleSpec spec) throws SQLException {
        ps.setObject(i++, streamId, java.sql.Types.BIGINT);
        ps.setObject(i++, streamId, java.sql.Types.BIGINT);
        ps.setString(i++, queue);
        ps.setString(i++, queue);
        ps.setString(i++, spec.expression());
        ps.setString(i++, spec.zone().getId());
        ps.setBytes(i++, spec.payload());
        ps.setString(i++, spec.contentType());
        ps.setString(i++, spec.misfire().skip() ? "skip" : "catch_up");
        ps.setInt(i++, spec.misfire().maxFires());
        return i;
    }

    private void setSuspended(Connection c, String name, boolean suspended) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.setSuspended)) {
            ps.setBoolean(1, suspended);
            ps.setString(2, name);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw notFound(name);
                }
            }
        }
    }

    private void moveCursor(Connection c, long id, Instant next) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.moveCursor)) {
            ps.setObject(1, ts(next), java.sql.Types.TIMESTAMP_WITH_TIMEZONE);
            ps.setLong(2, id);
            ps.executeUpdate();
        }
    }

    private void wake(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.wake)) {
            ps.setString(1, channel);
            ps.execute();
        }
    }

    private Optional<Row> select(Connection c, String name, boolean forUpdate) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(forUpdate ? sql.selectByNameForUpdate : sql.selectByName)) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(row(rs)) : Optional.empty();
            }
        }
    }

    private static Row row(ResultSet rs) throws SQLException {
        ScheduleSpec.Target target = "queue".equals(rs.getString(5)) ? ScheduleSpec.Target.queue(rs.getString(6))
                : ScheduleSpec.Target.stream(rs.getString(6));
        ScheduleSpec.Misfire misfire = new ScheduleSpec.Misfire(rs.getInt(10));
        ScheduleSpec spec = new ScheduleSpec(rs.getString(3), ZoneId.of(rs.getString(4)), target, rs.getBytes(7),
                rs.getString(8), misfire);
        return new Row(rs.getLong(1), rs.getString(2), spec, rs.getBoolean(11), instant(rs.getTimestamp(12)),
                instant(rs.getTimestamp(13)), instant(rs.getTimestamp(14)), rs.getLong(15),
                rs.getTimestamp(16).toInstant(), rs.getTimestamp(17).toInstant());
    }

    private static Instant now(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT now()"); ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getTimestamp(1).toInstant();
        }
    }

    private static Instant instant(Timestamp t) {
        return t == null ? null : t.toInstant();
    }

    /** A bind value for timestamptz that does not go through the JVM's default zone. */
    private static java.time.OffsetDateTime ts(Instant i) {
        return i == null ? null : i.atOffset(java.time.ZoneOffset.UTC);
    }

    private boolean systemReadable(Connection c) throws SQLException {
        if (!migrator.controlPlaneExists(c)) {
            return false;
        }
        Migrator.requireCurrent(migrator.systemState(c), "the control plane of schema '" + schema + "'");
        return true;
    }

    private void requireSystem(Connection c) throws SQLException {
        if (!systemReadable(c)) {
            throw new SluiceException(ErrorCode.SYSTEM_NOT_REGISTERED, "schema '" + schema + "' has no Sluice control plane");
        }
    }

    private static SluiceException notFound(String name) {
        return new SluiceException(ErrorCode.SCHEDULE_NOT_FOUND, "schedule '" + name + "' does not exist");
    }
}
