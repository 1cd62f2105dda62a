package dev.sluice.internal.queue;

import static dev.sluice.internal.queue.JobValues.instant;
import static dev.sluice.internal.queue.JobValues.micros;

import dev.sluice.DeadJob;
import dev.sluice.DeadReason;
import dev.sluice.ErrorCode;
import dev.sluice.JobInfo;
import dev.sluice.JobState;
import dev.sluice.Page;
import dev.sluice.QueueInfo;
import dev.sluice.QueueStats;
import dev.sluice.SluiceException;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.jdbc.Sql;
import dev.sluice.internal.text.Echo;
import java.nio.charset.StandardCharsets;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Optional;

/**
 * Operator reads of the job tables: one job, keyset pages of live and dead jobs with opaque cursors
 * (never OFFSET), counts by state, and the list of queues with their counts. Reads only; payloads are left out (their size is given).
 */
public final class JobListing {
    private final Db db;
    private final QueueSql sql;

    JobListing(Db db, QueueSql sql) {
        this.db = db;
        this.sql = sql;
    }

    /** The live job with this id in this queue, or empty. */
    public Optional<JobInfo> job(String queue, long id) {
        return db.read("read job " + id, c -> Sql.first(c, sql.jobById, JobListing::info, queue, id));
    }

    /** A keyset page of live jobs of one state (pending in claim order, processing by claim expiry). */
    public Page<JobInfo> jobs(String queue, JobState state, String cursor, int limit) {
        if (state == JobState.WAITING) {
            return waiting(queue, cursor, limit);
        }
        long[] after = cursor == null || cursor.isEmpty() ? null
                : decode(cursor, state == JobState.PENDING ? "jp" : "jr", state == JobState.PENDING ? 3 : 2);
        String statement;
        Object[] params;
        if (state == JobState.PENDING) {
            statement = after == null ? sql.pendingFirst : sql.pendingAfter;
            params = after == null ? new Object[] {queue, limit + 1}
                    : new Object[] {queue, (int) after[0], (int) after[0], after[1], after[2], limit + 1};
        } else {
            statement = after == null ? sql.processingFirst : sql.processingAfter;
            params = after == null ? new Object[] {queue, limit + 1} : new Object[] {queue, after[0], after[1], limit + 1};
        }
        List<JobInfo> items = db.read("list jobs of queue '" + queue + "'",
                c -> Sql.list(c, statement, JobListing::info, params));
        String next = null;
        if (items.size() > limit) {
            items = items.subList(0, limit);
            JobInfo last = items.get(limit - 1);
            next = state == JobState.PENDING ? encode("jp", last.priority(), micros(last.runAt()), last.id())
                    : encode("jr", micros(last.claimExpiresAt()), last.id());
        }
        return new Page<>(List.copyOf(items), next);
    }

    /** A keyset page of jobs waiting for their parents, by id. */
    private Page<JobInfo> waiting(String queue, String cursor, int limit) {
        long after = cursor == null || cursor.isEmpty() ? 0 : decode(cursor, "jw", 1)[0];
        List<JobInfo> items = db.read("list waiting jobs of queue '" + queue + "'", c -> after == 0
                ? Sql.list(c, sql.waitingFirst, JobListing::info, queue, limit + 1)
                : Sql.list(c, sql.waitingAfter, JobListing::info, queue, after, limit + 1));
        String next = null;
        if (items.size() > limit) {
            items = items.subList(0, limit);
            next = encode("jw", items.get(limit - 1).id());
        }
        return new Page<>(List.copyOf(items), next);
    }

    /** A keyset page of dead jobs, by id. */
    public Page<DeadJob> dead(String queue, String cursor, int limit) {
        long after = cursor == null || cursor.isEmpty() ? 0 : decode(cursor, "jd", 1)[0];
        List<DeadJob> items = db.read("list dead jobs of queue '" + queue + "'", c -> Sql.list(c, sql.deadPage,
                rs -> new DeadJob(rs.getLong(1), rs.getString(2), DeadReason.fromDb(rs.getString(3)), rs.getString(4),
                        rs.getInt(5), rs.getInt(6), rs.getInt(7), rs.getString(8), dev.sluice.internal.text.Headers.decode(rs.getString(9)),
                        rs.getString(10), rs.getInt(11), instant(rs.getTimestamp(12)), instant(rs.getTimestamp(13)),
                        instant(rs.getTimestamp(14))),
                queue, after, limit + 1));
        String next = null;
        if (items.size() > limit) {
            items = items.subList(0, limit);
            next = encode("jd", items.get(limit - 1).id());
        }
        return new Page<>(List.copyOf(items), next);
    }

    /** Counts of the queue's jobs by state. */
    public QueueStats stats(String queue) {
        return db.read("count jobs of queue '" + queue + "'", c -> Sql.first(c, sql.stats,
                rs -> new QueueStats(rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getLong(5)),
                queue, queue, queue, queue, queue).orElseThrow());
    }

    /** Every queue that has live or dead jobs, by name, with its counts (scans both job tables). */
    public List<QueueInfo> queues() {
        return db.read("list queues", c -> List.copyOf(Sql.list(c, sql.queues,
                rs -> new QueueInfo(rs.getString(1), rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getLong(5),
                        rs.getLong(6)))));
    }

    private static JobInfo info(ResultSet rs) throws SQLException {
        return new JobInfo(rs.getLong(1), rs.getString(2), JobState.valueOf(rs.getString(3).toUpperCase(java.util.Locale.ROOT)),
                rs.getInt(4), instant(rs.getTimestamp(5)), instant(rs.getTimestamp(6)), rs.getInt(7), rs.getInt(8),
                Duration.ofNanos(rs.getLong(9)), Duration.ofNanos(rs.getLong(10)), Duration.ofNanos(rs.getLong(11)),
                Duration.ofNanos(rs.getLong(12)), rs.getString(13), instant(rs.getTimestamp(14)), instant(rs.getTimestamp(15)),
                rs.getString(16), rs.getString(17), dev.sluice.internal.text.Headers.decode(rs.getString(18)), rs.getString(19), rs.getInt(20),
                instant(rs.getTimestamp(21)), instant(rs.getTimestamp(22)));
    }

    /** An opaque keyset cursor: the listing's kind and the position's numbers (also {@link RunReads}'). */
    static String encode(String kind, long... parts) {
        StringBuilder b = new StringBuilder(kind);
        for (long p : parts) {
            b.append(':').append(p);
        }
        return Base64.getUrlEncoder().withoutPadding().encodeToString(b.toString().getBytes(StandardCharsets.UTF_8));
    }

    private static long[] decode(String cursor, String kind, int parts) {
        return decode(cursor, kind, parts, ErrorCode.INVALID_QUEUE_OPTIONS);
    }

    /** The position of a cursor of listing {@code kind}; anything else is {@code code} (also {@link RunReads}'). */
    static long[] decode(String cursor, String kind, int parts, ErrorCode code) {
        try {
            String[] s = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8).split(":");
            if (s.length != parts + 1 || !s[0].equals(kind)) {
                throw new IllegalArgumentException(cursor);
            }
            long[] out = new long[parts];
            for (int i = 0; i < parts; i++) {
                out[i] = Long.parseLong(s[i + 1]);
            }
            return out;
        } catch (IllegalArgumentException e) {
            throw new SluiceException(code, "not a page cursor of this listing: '" + Echo.of(cursor) + "'");
        }
    }
}
