package dev.sluice.bench.lab;

import dev.sluice.LockHandle;
import dev.sluice.Sluice;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.SplittableRandom;

/**
 * The lock engine of the lab: every producer and consumer process runs a holder that takes one of a few TTL locks,
 * writes to the lab's protected resource under the lock's fencing token a few times (renewing between writes), and
 * releases it; some holds stall past the TTL before their next write, so another process takes the lock over and the
 * stalled write arrives with a stale token. The resource ({@code lock_resource}, one row per lock) is what a fencing
 * token exists for: under the row's lock it refuses a token lower than the highest it has accepted. Every write, its
 * outcome and the writer's view of its own expiry go to {@code lock_write} in the write's own transaction, so that
 * table is exact; acquisitions, renewals and releases go to the batched ledger. {@link LockChecker} holds it all
 * against the rules (no stale token accepted, no write refused while its lock was held, tokens unique and rising).
 */
final class LockEngine implements LabEngine {
    static final String NAME = "lock";
    /** How many locks the holders share (few, so takeovers are frequent). */
    static final int LOCKS = 3;
    /** A lock name: {@code lab-lock-<n>}. */
    static final String PREFIX = "lab-lock-";
    /** Share of holds that stall past the TTL before their next write (when the run hangs handlers). */
    static final double STALL_SHARE = 0.1;

    static final LedgerWriter.Table ACQUIRE = LedgerWriter.table("lock_acquire", "instance", "lock", "token", "ttl_ms",
            "expires_at", "at");
    static final LedgerWriter.Table RENEW = LedgerWriter.table("lock_renew", "instance", "lock", "token", "renewed",
            "expires_at", "at");

    /**
     * The protected write: the highest accepted token under the row's lock, then the write if ours is not lower; the
     * record's {@code checked_at} is the database clock after the row lock was granted.
     */
    static final String LOCK_ROW = "SELECT token FROM sluice_lab.lock_resource WHERE name = ? FOR UPDATE";
    static final String ACCEPT = "UPDATE sluice_lab.lock_resource SET token = ?, writes = writes + 1, holder = ?"
            + " WHERE name = ? RETURNING writes";
    static final String RECORD = """
        INSERT INTO sluice_lab.lock_write (instance, lock, token, seen_token, accepted, serial, held_until, checked_at, stalled)
        VALUES (?, ?, ?, ?, ?, ?, ?, clock_timestamp(), ?)
        """;

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String ddl() {
        StringBuilder rows = new StringBuilder();
        for (int i = 0; i < LOCKS; i++) {
            rows.append(i == 0 ? "" : ", ").append("('").append(PREFIX).append(i).append("')");
        }
        return """
            -- the protected resource: the highest fencing token it accepted, and how many writes it took
            CREATE TABLE sluice_lab.lock_resource (
                name    text PRIMARY KEY,
                token   bigint NOT NULL DEFAULT 0,
                writes  bigint NOT NULL DEFAULT 0,
                holder  text
            );
            INSERT INTO sluice_lab.lock_resource (name) VALUES %s;
            -- every write, in the write's transaction: its token, the highest the resource had seen, the outcome,
            -- the accepted write's place in the resource's order, the writer's expiry as it knew it, when it was checked
            CREATE TABLE sluice_lab.lock_write (
                instance    text NOT NULL,
                lock        text NOT NULL,
                token       bigint NOT NULL,
                seen_token  bigint NOT NULL,
                accepted    boolean NOT NULL,
                serial      bigint,
                held_until  timestamptz NOT NULL,
                checked_at  timestamptz NOT NULL,
                stalled     boolean NOT NULL
            );
            CREATE TABLE sluice_lab.lock_acquire (
                instance    text NOT NULL,
                lock        text NOT NULL,
                token       bigint NOT NULL,
                ttl_ms      bigint NOT NULL,
                expires_at  timestamptz NOT NULL,
                at          timestamptz NOT NULL
            );
            CREATE TABLE sluice_lab.lock_renew (
                instance    text NOT NULL,
                lock        text NOT NULL,
                token       bigint NOT NULL,
                renewed     boolean NOT NULL,
                expires_at  timestamptz,
                at          timestamptz NOT NULL
            );
            """.formatted(rows);
    }

    @Override
    public void setUp(Sluice sluice) {
        // Locks need no registration (the stream's registration installed the control plane).
    }

    @Override
    public AutoCloseable startProducer(Context ctx) {
        return start(ctx);
    }

    @Override
    public AutoCloseable startConsumer(Context ctx) {
        return start(ctx);
    }

    /** The lock TTL of a run: a third of the lease (at least 300 ms), so stalls and takeovers are quick. */
    static Duration ttl(long leaseMs) {
        return Duration.ofMillis(Math.max(300, leaseMs / 3));
    }

    private static AutoCloseable start(Context ctx) {
        Holder h = new Holder(ctx);
        Thread t = new Thread(h, "lab-lock-holder");
        t.setDaemon(true); // a SIGTERM or SIGKILL may stop the process mid-hold: the TTL frees the lock
        t.start();
        return () -> {
            h.stop = true;
            t.interrupt();
            t.join(10_000);
        };
    }

    /** One process's holder: acquire, write, renew, sometimes stall, release; over and over until stopped. */
    private static final class Holder implements Runnable {
        private final Context ctx;
        private final Duration ttl;
        private final SplittableRandom random;
        private volatile boolean stop;

        Holder(Context ctx) {
            this.ctx = ctx;
            this.ttl = ttl(ctx.leaseMs());
            this.random = new SplittableRandom(ctx.seed() ^ ctx.instance().hashCode());
        }

        @Override
        public void run() {
            while (!stop) {
                try {
                    hold();
                } catch (InterruptedException e) {
                    return;
                } catch (RuntimeException | SQLException e) {
                    // a terminated backend, a restarting server: the lock expires by itself; try again shortly
                    sleep(200);
                }
            }
        }

        private void hold() throws SQLException, InterruptedException {
            String lock = PREFIX + random.nextInt(LOCKS);
            Optional<LockHandle> taken = ctx.sluice().lock(lock).tryAcquire(ttl);
            if (taken.isEmpty()) {
                Thread.sleep(20 + random.nextInt(40));
                return;
            }
            LockHandle handle = taken.get();
            ctx.ledger().append(ACQUIRE, ctx.instance(), lock, handle.fencingToken(), ttl.toMillis(), handle.expiresAt(),
                    Instant.now());
            boolean stalls = ctx.hangRate() > 0 && random.nextDouble() < STALL_SHARE;
            int writes = 2 + random.nextInt(4);
            for (int i = 0; i < writes && !stop; i++) {
                boolean stalled = stalls && i == writes - 1;
                if (stalled) {
                    Thread.sleep(ttl.toMillis() * 2 + 100); // past the TTL: the next holder takes over and writes
                }
                write(lock, handle, stalled);
                Thread.sleep(random.nextInt(ttl.toMillis() > 600 ? 40 : 15));
                if (i % 2 == 1 || stalled) {
                    boolean renewed = handle.renew(ttl);
                    ctx.ledger().append(RENEW, ctx.instance(), lock, handle.fencingToken(), renewed,
                            renewed ? handle.expiresAt() : null, Instant.now());
                    if (!renewed) {
                        return;
                    }
                }
            }
            handle.release();
        }

        /** A write to the protected resource under {@code handle}'s token, recorded in its own transaction. */
        private void write(String lock, LockHandle handle, boolean stalled) throws SQLException {
            long token = handle.fencingToken();
            Instant heldUntil = handle.expiresAt();
            try (Connection c = ctx.pool().getConnection()) {
                c.setAutoCommit(false);
                try {
                    long seen;
                    try (PreparedStatement ps = c.prepareStatement(LOCK_ROW)) {
                        ps.setString(1, lock);
                        try (ResultSet rs = ps.executeQuery()) {
                            rs.next();
                            seen = rs.getLong(1);
                        }
                    }
                    boolean accepted = token >= seen;
                    Long serial = null;
                    if (accepted) {
                        try (PreparedStatement ps = c.prepareStatement(ACCEPT)) {
                            ps.setLong(1, token);
                            ps.setString(2, ctx.instance());
                            ps.setString(3, lock);
                            try (ResultSet rs = ps.executeQuery()) {
                                rs.next();
                                serial = rs.getLong(1);
                            }
                        }
                    }
                    try (PreparedStatement ps = c.prepareStatement(RECORD)) {
                        ps.setString(1, ctx.instance());
                        ps.setString(2, lock);
                        ps.setLong(3, token);
                        ps.setLong(4, seen);
                        ps.setBoolean(5, accepted);
                        ps.setObject(6, serial);
                        ps.setTimestamp(7, Timestamp.from(heldUntil));
                        ps.setBoolean(8, stalled);
                        ps.executeUpdate();
                    }
                    c.commit();
                } catch (SQLException | RuntimeException e) {
                    try {
                        c.rollback();
                    } catch (SQLException ignored) {
                        // the connection is gone: the transaction is too
                    }
                    throw e;
                }
            }
        }

        private static void sleep(long ms) {
            try {
                Thread.sleep(ms);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public Section check(Connection c, boolean drained) throws SQLException {
        return LockChecker.check(c);
    }
}
