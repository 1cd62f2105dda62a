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
 * snapshot S (the observing statement's own, taken just before the head was read),
 * it reads {@code pg_locks} once and finds the <em>holders</em>: the candidates — transactions older than
 * {@code me} that S does not see as ended — whose virtual transaction holds {@code RowExclusiveLock} on the
 * stream's log. The observation settles once a snapshot <em>taken after the lock read</em> sees every holder
 * ended (at once when there are none). Only transactions that hold the log's lock can hold the fence, so an
 * unrelated long transaction (a migration, an idle session after a write, a forgotten prepared transaction,
 * another database's work) never does.
 *
 * <p>Why the holders are exactly enough. A producer P that drew an id at or below H:
 * <ul>
 * <li>took its transaction id before drawing (ProduceSql), and drew before H was read, so its xid p is
 *     below {@code me};</li>
 * <li>holds {@code RowExclusiveLock} on the log's parent table from before its draw until it ends: the
 *     INSERT that draws the id locks its target before it executes;</li>
 * <li>is either visible in S (then in every later snapshot), or a candidate: in S's list of running
 *     transactions, or at or above S's xmax (assigned but not yet known ended; this also covers transactions
 *     that started after S), and below {@code me}.</li>
 * </ul>
 * If P is a candidate and still shows the log's lock (with its transaction-id lock) in the lock read, it is a
 * holder. If it does not, it has ended: PostgreSQL marks a transaction ended in the process array before it
 * releases any lock, so a snapshot taken after the lock read sees it. Either way a snapshot taken after the
 * lock read in which every holder has ended sees every committed id at or below H. A running candidate
 * without the log's lock (an unrelated transaction) is never a holder.
 *
 * <p>The "after the lock read" matters. A first version took the snapshot for the fetch before the lock read
 * and judged a candidate ended by the absence of its transaction-id lock; but a committing backend releases its
 * fast-path relation locks (the log's among them) before its transaction-id lock, so a producer caught between
 * the two looked running and lock-free while the fetch's older snapshot could not see it. Under CPU starvation
 * that skipped a message (2 in 12 stressed runs). The claim now reads the locks in its first statement and
 * fetches in its second.
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
     * The observation's CTEs, in this order: {@code h} reads the head, {@code o} (head, me, s) then takes the
     * transaction id (MATERIALIZED keeps that order) next to the statement's snapshot, and {@code locks} (see
     * {@link #locksCte}). Select {@code o.head} and {@link #HOLDERS} from {@code o}.
     */
    static String observationCtes(FamilyTables t) {
        return "h AS MATERIALIZED (SELECT " + t.headExpression() + " AS head),"
                + " o AS MATERIALIZED (SELECT h.head, pg_current_xact_id() AS me, pg_current_snapshot() AS s FROM h), "
                + locksCte(t);
    }

    /**
     * The holders (xid8[]) of the observation in {@link #observationCtes}: none when its snapshot shows no older
     * transaction (then {@code pg_locks} is not read at all).
     */
    static final String HOLDERS = "(CASE WHEN pg_snapshot_xmin(o.s) >= o.me THEN '{}'::xid8[] ELSE " + holders("o.s", "o.me")
            + " END)";

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
                + "     WHERE r.locktype = 'transactionid' AND r.x32 = c.x::text::bigint % 4294967296))";
    }

    /** A boolean expression: every transaction in {@code xids} (xid8[]) has ended before {@code snapshot}. */
    static String ended(String xids, String snapshot) {
        return "NOT EXISTS (SELECT 1 FROM unnest(" + xids + ") x WHERE NOT pg_visible_in_snapshot(x, " + snapshot + "))";
    }

    /**
     * Observes the head on {@code c} (auto-commit) with the claim's observation, in one statement. The caller
     * decides with later statements ({@link #settled}, its read), whose snapshots are taken after the lock read.
     */
    public static Observation observe(Connection c, FamilyTables t) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(ConsumeSql.of(t).messages.observe); ResultSet rs = ps.executeQuery()) {
            rs.next();
            return new Observation(rs.getLong(1), List.of((String[]) rs.getArray(2).getArray()));
        }
    }

    /**
     * The holders of an observation whose transaction id is {@code me}, seen from {@code snapshot} (a
     * {@code pg_snapshot} text; null: the statement's own snapshot, taken now). Tests replay interleavings step by
     * step with it, passing a snapshot captured earlier.
     */
    static List<String> holders(Connection c, FamilyTables t, String snapshot, String me) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(ConsumeSql.of(t).messages.holdersAt)) {
            ps.setString(1, snapshot);
            ps.setString(2, me);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return List.of((String[]) rs.getArray(1).getArray());
            }
        }
    }

    /** Whether every holder (parameter: xid8[]) has ended, seen from a snapshot taken now. */
    private static final String SETTLED = "SELECT " + ended("?::xid8[]", "pg_current_snapshot()");

    /** Whether every holder of the observation has ended (read-only; no transaction id). */
    public static boolean settled(Connection c, Observation o) throws SQLException {
        if (o.holders().isEmpty()) {
            return true;
        }
        try (PreparedStatement ps = c.prepareStatement(SETTLED)) {
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
