package dev.sluice.internal.consume;

import dev.sluice.internal.schema.FamilyTables;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;

/**
 * The snapshot fence (docs/fence.md): a head below which every id is resolved — committed, or never to exist.
 *
 * <p>An observation reads the stream's head H and then takes a transaction id {@code me}; then, judged from a
 * snapshot S (the claim uses its statement's own, taken just before the head was read; a reader takes one after),
 * it finds the <em>holders</em>: the transactions that might still commit an id at or below H without S seeing
 * it. The observation settles once every holder has ended. Only transactions
 * that hold a lock on the stream's log can hold its fence, so an unrelated long transaction (a migration,
 * an idle session after a write, a forgotten prepared transaction, another database's work) never does.
 *
 * <p>Why the holders are exactly enough. A producer P that drew an id at or below H:
 * <ul>
 * <li>took its transaction id before drawing (ProduceSql), and drew before H was read, so its xid p is
 *     below {@code me};</li>
 * <li>holds {@code RowExclusiveLock} on the log's parent table from before its draw until it ends: the
 *     INSERT that draws the id locks its target before it executes, and locks are released only after the
 *     transaction is recorded as ended;</li>
 * <li>is either visible in S (ended before S: S sees its rows), or a <em>candidate</em>: in S's list of running
 *     transactions, or at or above S's xmax (assigned but not yet known ended), and below {@code me}.</li>
 * </ul>
 * The locks are read after S is taken, and then each candidate without the log's lock is asked whether it is
 * still in progress ({@code pg_xact_status}). PostgreSQL marks a transaction ended before it releases any lock,
 * so a candidate still in progress after the lock read held all its locks during the read: had it been P, the
 * log's lock would have been seen. A candidate no longer in progress ended after S (S cannot see it) and is
 * kept. So the holders are the candidates that held the log's lock or have ended since S — every P not
 * visible in S is among them, and a running candidate without the log's lock (an unrelated transaction) is
 * not. A later snapshot in which every holder has ended sees every committed id at or below H.
 *
 * <p>The order matters. Judging "ended" by the candidate's transaction-id lock instead (one lock read, no
 * second question) is wrong: a committing backend releases its fast-path relation locks, the log's among
 * them, before its transaction-id lock in the main lock table, so a producer caught in between looks running
 * and lock-free. Under CPU starvation that window was wide enough to skip a message (seen twice in tests run
 * beside a busy build).
 *
 * <p>Lock and transaction ids: {@code pg_locks} shows 32-bit xids; candidates are 64-bit ({@code xid8}) and
 * all lie within 2^31 of the current xid, so their low 32 bits identify them. A prepared (2PC) transaction
 * keeps its locks and its transaction id under one virtual transaction id, like a live one. Candidates at or
 * above xmax may include subtransaction ids, which a snapshot cannot judge; keeping some of them is harmless,
 * because the top-level id of every producer that matters is itself a candidate and a holder, and that is the
 * id the later snapshot checks.
 */
public final class SnapshotFence {
    private SnapshotFence() {
    }

    /** An observation: the head, and the transactions that may still commit an id at or below it. */
    public record Observation(long head, List<String> holders) {
        public Observation {
            holders = List.copyOf(holders);
        }
    }

    /**
     * A {@code MATERIALIZED} CTE named {@code locks} (vx, locktype, x32): the granted transaction-id locks of
     * the server and the granted {@code RowExclusiveLock}s on the stream's log in this database. Postgres
     * evaluates a CTE only when it is read, so a claim that needs no lock read pays nothing.
     */
    static String locksCte(FamilyTables t) {
        return "locks AS MATERIALIZED (SELECT l.virtualtransaction AS vx, l.locktype, l.transactionid::text::bigint AS x32"
                + " FROM pg_locks l WHERE l.granted AND ((l.locktype = 'transactionid' AND l.mode = 'ExclusiveLock')"
                + " OR (l.locktype = 'relation' AND l.mode = 'RowExclusiveLock' AND l.relation = '" + t.messageLog()
                + "'::regclass AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()))))";
    }

    /**
     * A scalar subquery: the holders (xid8[], empty when none) of an observation whose transaction id is
     * {@code me} (an xid8 expression), seen from snapshot {@code snapshot} (a pg_snapshot expression taken after
     * the head was read and {@code me} was assigned). Reads the {@link #locksCte} CTE.
     */
    static String holders(String snapshot, String me) {
        return "(SELECT coalesce(array_agg(c.x ORDER BY c.x), '{}') FROM ("
                + " SELECT x FROM pg_snapshot_xip(" + snapshot + ") x WHERE x < " + me
                + " UNION ALL SELECT g::text::xid8 FROM generate_series(pg_snapshot_xmax(" + snapshot + ")::text::bigint,"
                + "   " + me + "::text::bigint - 1) g) c"
                + " WHERE EXISTS (SELECT 1 FROM locks r JOIN locks w ON w.vx = r.vx AND w.locktype = 'relation'"
                + "     WHERE r.locktype = 'transactionid' AND r.x32 = c.x::text::bigint % 4294967296)"
                // Ended since the snapshot: asked only after every lock was read (CASE evaluates its condition,
                // which reads them all, before its result).
                + "  OR CASE WHEN (SELECT count(*) FROM locks) >= 0"
                + "      THEN pg_xact_status(c.x) IS DISTINCT FROM 'in progress' END)";
    }

    /** A boolean expression: every transaction in {@code xids} (xid8[]) has ended before {@code snapshot}. */
    static String ended(String xids, String snapshot) {
        return "NOT EXISTS (SELECT 1 FROM unnest(" + xids + ") x WHERE NOT pg_visible_in_snapshot(x, " + snapshot + "))";
    }

    /**
     * Observes the head on {@code c} (auto-commit): one statement reads the head and then takes a transaction
     * id (MATERIALIZED keeps that order), a second one — with a snapshot taken after both — finds the holders.
     */
    public static Observation observe(Connection c, FamilyTables t) throws SQLException {
        long head;
        String me;
        try (PreparedStatement ps = c.prepareStatement("WITH h AS MATERIALIZED (SELECT " + t.headExpression() + " AS head)"
                + " SELECT h.head, pg_current_xact_id()::text FROM h");
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            head = rs.getLong(1);
            me = rs.getString(2);
        }
        return new Observation(head, holders(c, t, null, me));
    }

    /**
     * The holders of an observation whose transaction id is {@code me}, seen from {@code snapshot} (a
     * {@code pg_snapshot} text; null: the statement's own snapshot, taken now). Tests pass an earlier snapshot
     * to replay an interleaving step by step.
     */
    static List<String> holders(Connection c, FamilyTables t, String snapshot, String me) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("WITH snap AS MATERIALIZED (SELECT coalesce(?::pg_snapshot,"
                + " pg_current_snapshot()) AS s, ?::xid8 AS me), " + locksCte(t) + " SELECT " + holders("snap.s", "snap.me")
                + "::text[] FROM snap")) {
            ps.setString(1, snapshot);
            ps.setString(2, me);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return List.of((String[]) rs.getArray(1).getArray());
            }
        }
    }

    /** Whether every holder of the observation has ended (read-only; no transaction id). */
    public static boolean settled(Connection c, Observation o) throws SQLException {
        if (o.holders().isEmpty()) {
            return true;
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT " + ended("?::xid8[]", "pg_current_snapshot()"))) {
            Array xids = c.createArrayOf("text", o.holders().toArray());
            ps.setArray(1, xids);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    /**
     * Observes on {@code c} (auto-commit) and waits up to {@code maxWait} for the observation to settle;
     * returns the settled head, or -1 if a transaction that may still commit below it is open after the wait.
     */
    public static long settledHead(Connection c, FamilyTables t, Duration maxWait) throws SQLException, InterruptedException {
        Observation o = observe(c, t);
        long deadline = System.nanoTime() + maxWait.toNanos();
        long sleepMs = 1;
        while (!settled(c, o)) {
            if (System.nanoTime() > deadline) {
                return -1;
            }
            Thread.sleep(sleepMs);
            sleepMs = Math.min(50, sleepMs * 2);
        }
        return o.head();
    }
}
