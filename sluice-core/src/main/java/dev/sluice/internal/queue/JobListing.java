package dev.sluice.internal.queue;

import static dev.sluice.internal.queue.JobStore.headers;
import static dev.sluice.internal.queue.JobStore.instant;
import static dev.sluice.internal.queue.JobStore.micros;

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
import dev.sluice.internal.text.Echo;
import java.nio.charset.StandardCharsets;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
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
    /** Every queue with live or dead jobs and its counts: one pass over each table, grouped by queue. */
    private final String queues;

    JobListing(Db db, QueueSql sql) {
        this.db = db;
        this.sql = sql;
        this.queues = """
            SELECT queue, sum(pending)::bigint, sum(scheduled)::bigint, sum(processing)::bigint, sum(dead)::bigint
            FROM (SELECT queue,
                         count(*) FILTER (WHERE state = 'pending') AS pending,
                         count(*) FILTER (WHERE state = 'pending' AND run_at > now()) AS scheduled,
                         count(*) FILTER (WHERE state = 'processing') AS processing,
                         0 AS dead
                  FROM %1$s GROUP BY queue
                  UNION ALL
                  SELECT queue, 0, 0, 0, count(*) FROM %2$s GROUP BY queue) AS counts
            GROUP BY queue
            ORDER BY queue
            """.formatted(sql.job, sql.jobDead);
    }

    /** The live job with this id in this queue, or empty. */
    public Optional<JobInfo> job(String queue, long id) {
        return db.autoCommit("read job " + id, c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.jobById)) {
                ps.setString(1, queue);
                ps.setLong(2, id);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? Optional.of(info(rs)) : Optional.empty();
                }
            }
        });
    }

    /** A keyset page of live jobs of one state (pending in claim order, processing by claim expiry). */
    public Page<JobInfo> jobs(String queue, JobState state, String cursor, int limit) {
        long[] after = cursor == null || cursor.isEmpty() ? null
                : decode(cursor, state == JobState.PENDING ? "jp" : "jr", state == JobState.PENDING ? 3 : 2);
        List<JobInfo> items = db.autoCommit("list jobs of queue '" + queue + "'", c -> {
            String statement = state == JobState.PENDING ? (after == null ? sql.pendingFirst : sql.pendingAfter)
                    : (after == null ? sql.processingFirst : sql.processingAfter);
            try (PreparedStatement ps = c.prepareStatement(statement)) {
                int i = 1;
                ps.setString(i++, queue);
                if (after != null && state == JobState.PENDING) {
                    ps.setInt(i++, (int) after[0]);
                    ps.setInt(i++, (int) after[0]);
                    ps.setLong(i++, after[1]);
                    ps.setLong(i++, after[2]);
                } else if (after != null) {
                    ps.setLong(i++, after[0]);
                    ps.setLong(i++, after[1]);
                }
                ps.setInt(i, limit + 1);
                List<JobInfo> rows = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        rows.add(info(rs));
                    }
                }
                return rows;
            }
        });
        String next = null;
        if (items.size() > limit) {
            items = items.subList(0, limit);
            JobInfo last = items.get(limit - 1);
            next = state == JobState.PENDING ? encode("jp", last.priority(), micros(last.runAt()), last.id())
                    : encode("jr", micros(last.claimExpiresAt()), last.id());
        }
        return new Page<>(List.copyOf(items), next);
    }

    /** A keyset page of dead jobs, by id. */
    public Page<DeadJob> dead(String queue, String cursor, int limit) {
        long after = cursor == null || cursor.isEmpty() ? 0 : decode(cursor, "jd", 1)[0];
        List<DeadJob> items = db.autoCommit("list dead jobs of queue '" + queue + "'", c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.deadPage)) {
                ps.setString(1, queue);
                ps.setLong(2, after);
                ps.setInt(3, limit + 1);
                List<DeadJob> rows = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        rows.add(new DeadJob(rs.getLong(1), rs.getString(2), DeadReason.fromDb(rs.getString(3)), rs.getString(4),
                                rs.getInt(5), rs.getInt(6), rs.getInt(7), rs.getString(8), headers(rs.getString(9)),
                                rs.getString(10), rs.getInt(11), instant(rs.getTimestamp(12)), instant(rs.getTimestamp(13)),
                                instant(rs.getTimestamp(14))));
                    }
                }
                return rows;
            }
        });
        String next = null;
        if (items.size() > limit) {
            items = items.subList(0, limit);
            next = encode("jd", items.get(limit - 1).id());
        }
        return new Page<>(List.copyOf(items), next);
    }

    /** Counts of the queue's jobs by state. */
    public QueueStats stats(String queue) {
        return db.autoCommit("count jobs of queue '" + queue + "'", c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.stats)) {
                for (int i = 1; i <= 4; i++) {
                    ps.setString(i, queue);
                }
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return new QueueStats(rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4));
                }
            }
        });
    }

    /** Every queue that has live or dead jobs, by name, with its counts (scans both job tables). */
    public List<QueueInfo> queues() {
        return db.autoCommit("list queues", c -> {
            try (PreparedStatement ps = c.prepareStatement(queues); ResultSet rs = ps.executeQuery()) {
                List<QueueInfo> rows = new ArrayList<>();
                while (rs.next()) {
                    rows.add(new QueueInfo(rs.getString(1), rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getLong(5)));
                }
                return List.copyOf(rows);
            }
        });
    }

    private static JobInfo info(ResultSet rs) throws SQLException {
        return new JobInfo(rs.getLong(1), rs.getString(2), JobState.valueOf(rs.getString(3).toUpperCase(java.util.Locale.ROOT)),
                rs.getInt(4), instant(rs.getTimestamp(5)), instant(rs.getTimestamp(6)), rs.getInt(7), rs.getInt(8),
                Duration.ofNanos(rs.getLong(9)), Duration.ofNanos(rs.getLong(10)), Duration.ofNanos(rs.getLong(11)),
                Duration.ofNanos(rs.getLong(12)), rs.getString(13), instant(rs.getTimestamp(14)), instant(rs.getTimestamp(15)),
                rs.getString(16), rs.getString(17), headers(rs.getString(18)), rs.getString(19), rs.getInt(20),
                instant(rs.getTimestamp(21)), instant(rs.getTimestamp(22)));
    }

    private static String encode(String kind, long... parts) {
        StringBuilder b = new StringBuilder(kind);
        for (long p : parts) {
            b.append(':').append(p);
        }
        return Base64.getUrlEncoder().withoutPadding().encodeToString(b.toString().getBytes(StandardCharsets.UTF_8));
    }

    private static long[] decode(String cursor, String kind, int parts) {
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
            throw new SluiceException(ErrorCode.INVALID_QUEUE_OPTIONS, "not a page cursor of this listing: '" + Echo.of(cursor) + "'");
        }
    }
}
