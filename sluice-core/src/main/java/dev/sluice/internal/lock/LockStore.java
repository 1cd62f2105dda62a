package dev.sluice.internal.lock;

import dev.sluice.ErrorCode;
import dev.sluice.LockHandle;
import dev.sluice.LockInfo;
import dev.sluice.SluiceException;
import dev.sluice.internal.jdbc.Db;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/** Runs the lock statements of one schema ({@link LockSql}); each is one autocommit statement. See docs/locks.md. */
public final class LockStore {
    /** The longest TTL a lock may be taken or renewed for. */
    public static final Duration MAX_TTL = Duration.ofDays(30);

    private final Db db;
    private final LockSql sql;

    /** The lock store of one installation schema. */
    public LockStore(Db db, String schema) {
        this.db = db;
        this.sql = new LockSql(schema);
    }

    /** Raises {@link ErrorCode#INVALID_LOCK_OPTIONS} unless {@code 0 < ttl <= 30 days}. */
    public static Duration checkTtl(Duration ttl) {
        if (ttl.isNegative() || ttl.isZero() || ttl.compareTo(MAX_TTL) > 0) {
            throw new SluiceException(ErrorCode.INVALID_LOCK_OPTIONS, "a lock TTL must be positive and at most "
                    + MAX_TTL + " (got " + ttl + ")");
        }
        if (ttl.toNanos() < 1_000) {
            throw new SluiceException(ErrorCode.INVALID_LOCK_OPTIONS, "a lock TTL must be at least 1 microsecond (got " + ttl + ")");
        }
        return ttl;
    }

    static long micros(Duration d) {
        return d.toNanos() / 1_000;
    }

    /** Takes the lock when free; empty when held. */
    public Optional<LockHandle> tryAcquire(String name, String owner, Duration ttl) {
        UUID token = UUID.randomUUID();
        return db.autoCommit("acquire lock '" + name + "'", c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.acquire)) {
                ps.setString(1, name);
                ps.setString(2, owner);
                ps.setObject(3, token);
                ps.setLong(4, micros(ttl));
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        return Optional.empty();
                    }
                    return Optional.of(new HeldLock(this, name, owner, token, rs.getLong(1), rs.getTimestamp(2).toInstant()));
                }
            }
        });
    }

    /** The new expiry, or null when the lock was lost. */
    Instant renew(String name, UUID token, Duration ttl) {
        return db.autoCommit("renew lock '" + name + "'", c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.renew)) {
                ps.setLong(1, micros(ttl));
                ps.setString(2, name);
                ps.setObject(3, token);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? rs.getTimestamp(1).toInstant() : null;
                }
            }
        });
    }

    boolean release(String name, UUID token) {
        return db.autoCommit("release lock '" + name + "'", c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.release)) {
                ps.setString(1, name);
                ps.setObject(2, token);
                return ps.executeUpdate() == 1;
            }
        });
    }

    /** Every lock of the schema by name, held or not (an operator read). */
    public List<LockInfo> list() {
        return db.read("list locks", c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.list); ResultSet rs = ps.executeQuery()) {
                List<LockInfo> rows = new ArrayList<>();
                while (rs.next()) {
                    rows.add(new LockInfo(rs.getString(1), rs.getString(2), rs.getBoolean(3), rs.getLong(4),
                            rs.getTimestamp(5).toInstant(), rs.getTimestamp(6).toInstant(), rs.getTimestamp(7).toInstant()));
                }
                return List.copyOf(rows);
            }
        });
    }
}
