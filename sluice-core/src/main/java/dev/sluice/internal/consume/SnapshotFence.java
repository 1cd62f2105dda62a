package dev.sluice.internal.consume;

import dev.sluice.internal.schema.FamilyTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;

/**
 * The snapshot fence (docs/consume.md, "the fence"): a head below which every id is resolved — committed, or never
 * to exist. One statement reads the sequence's head and then allocates this transaction's xid; once
 * every transaction older than that xid has ended, no producer can still commit an id at or below the
 * head, because producers take their xid before they draw ids (ProduceSql).
 */
public final class SnapshotFence {
    private SnapshotFence() {
    }

    /** An observation: the head and the xid allocated right after reading it. */
    public record Observation(long head, String xid) {
    }

    /**
     * Reads the head and allocates an xid, in the caller's transaction (commit it promptly: the fence
     * waits for every older transaction, its own included). The head is the sequence's last drawn value.
     */
    public static Observation observe(Connection c, FamilyTables t) throws SQLException {
        // MATERIALIZED: the head is read before the xid is allocated (the order the proof needs).
        try (PreparedStatement ps = c.prepareStatement("WITH h AS MATERIALIZED (SELECT " + t.headExpression() + " AS head)"
                + " SELECT h.head, pg_current_xact_id()::text FROM h");
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            return new Observation(rs.getLong(1), rs.getString(2));
        }
    }

    /** Whether every transaction older than the observation's xid has ended (read-only; no xid). */
    public static boolean settled(Connection c, Observation o) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_snapshot_xmin(pg_current_snapshot()) > ?::xid8")) {
            ps.setString(1, o.xid());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    /**
     * Observes with a short transaction of its own on {@code c} (auto-commit) and waits up to
     * {@code maxWait} for it to settle; returns the settled head, or -1 if older transactions are
     * still open after the wait.
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
