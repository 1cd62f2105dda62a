package dev.sluice.internal.queue;

import static dev.sluice.internal.queue.JobValues.instant;
import static dev.sluice.internal.queue.JobValues.micros;

import dev.sluice.ErrorCode;
import dev.sluice.JobRun;
import dev.sluice.Page;
import dev.sluice.RunEvent;
import dev.sluice.RunQuery;
import dev.sluice.RunStatus;
import dev.sluice.SluiceException;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.jdbc.Sql;
import dev.sluice.internal.text.Headers;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.List;
import java.util.Optional;

/**
 * Operator reads of runs: one run (its record, else its dead job, else the live job), keyset pages of a queue's
 * records with filters, and a job's event trail. Payloads and results are stored once and joined back here.
 */
public final class RunReads {
    /** The kind of the run listing's cursors (the other listings' are in {@link JobListing}). */
    private static final String CURSOR_KIND = "jn";
    private final Db db;
    private final QueueSql sql;

    RunReads(Db db, QueueSql sql) {
        this.db = db;
        this.sql = sql;
    }

    /** The run of job {@code id} in {@code queue}: its record, its dead job, or the live job; empty when none. */
    public Optional<JobRun> run(String queue, long id) {
        return db.read("read run " + id, c -> Sql.first(c, sql.runs.runById, RunReads::run, queue, id, queue, id,
                queue, id));
    }

    /** Whether the queue holds an ended trace of the job: a run record or a dead job. */
    boolean ended(String queue, long id) {
        return db.read("read run " + id, c -> Sql.first(c, sql.runs.endedById, rs -> rs.getBoolean(1), queue, id, queue, id)
                .orElse(false));
    }

    /** A page of the queue's run records, newest first. */
    public Page<JobRun> runs(String queue, RunQuery q) {
        long[] after = q.cursor() == null || q.cursor().isEmpty() ? null
                : JobListing.decode(q.cursor(), CURSOR_KIND, 2, ErrorCode.INVALID_ARGUMENT);
        Object statuses = q.statuses().isEmpty() ? new Sql.Null(Types.ARRAY)
                : Sql.array("text", q.statuses().stream().map(RunStatus::dbValue).toList());
        Object since = q.since() == null ? new Sql.Null(Types.TIMESTAMP_WITH_TIMEZONE) : (Object) q.since();
        Object until = q.until() == null ? new Sql.Null(Types.TIMESTAMP_WITH_TIMEZONE) : (Object) q.until();
        Object key = q.uniqueKey() == null ? new Sql.Null(Types.VARCHAR) : q.uniqueKey();
        Object name = q.headerName() == null ? new Sql.Null(Types.VARCHAR) : q.headerName();
        Object value = q.headerValue() == null ? new Sql.Null(Types.VARCHAR) : q.headerValue();
        Object at = after == null ? new Sql.Null(Types.BIGINT) : (Object) after[0];
        Object afterId = after == null ? new Sql.Null(Types.BIGINT) : (Object) after[1];
        List<JobRun> items = db.autoCommit("list runs of queue '" + queue + "'", c -> Sql.list(c, sql.runs.runsPage,
                RunReads::run, queue, statuses, statuses, since, until, key, key, name, name, value, at, at, afterId,
                q.limit() + 1));
        String next = null;
        if (items.size() > q.limit()) {
            items = items.subList(0, q.limit());
            JobRun last = items.get(q.limit() - 1);
            next = JobListing.encode(CURSOR_KIND, micros(last.finishedAt()), last.id());
        }
        return new Page<>(List.copyOf(items), next);
    }

    /** The job's event trail in sequence order (empty when it keeps none, or it was swept). */
    public List<RunEvent> events(String queue, long id) {
        return db.read("read events of job " + id, c -> List.copyOf(Sql.list(c, sql.runs.events,
                rs -> new RunEvent(rs.getLong(1), rs.getInt(2), RunEvent.Type.fromDb(rs.getString(3)),
                        instant(rs.getTimestamp(4)), (Integer) rs.getObject(5), rs.getString(6), rs.getString(7),
                        instant(rs.getTimestamp(8))),
                id, queue)));
    }

    private static JobRun run(ResultSet rs) throws SQLException {
        return new JobRun(rs.getLong(1), rs.getString(2), RunStatus.parse(rs.getString(3)), rs.getString(4), rs.getInt(5),
                rs.getInt(6), rs.getInt(7), instant(rs.getTimestamp(8)), instant(rs.getTimestamp(9)),
                instant(rs.getTimestamp(10)), rs.getString(11), rs.getBytes(12), rs.getString(13), rs.getBytes(14),
                rs.getString(15), rs.getString(16), rs.getString(17), Headers.decode(rs.getString(18)),
                instant(rs.getTimestamp(19)));
    }
}
