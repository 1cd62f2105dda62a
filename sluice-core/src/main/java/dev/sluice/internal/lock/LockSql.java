package dev.sluice.internal.lock;

import dev.sluice.internal.jdbc.Identifiers;

/**
 * Every statement that touches {@code lock}. A lock's row outlives its holders: release only clears the
 * owner and token, so the next acquisition continues the name's fencing tokens (one higher), and a
 * takeover of an expired lock does the same. The clock is the database's {@code now()}; every value is
 * a bind parameter.
 */
final class LockSql {
    static final String LOCK = "lock";

    /** Parameters: name, owner, token, ttl in microseconds. Returns the fencing token and expiry, or no row when held. */
    final String acquire;
    /** Parameters: ttl in microseconds, name, token. Returns the new expiry, or no row when the lock was lost. */
    final String renew;
    /** Parameters: name, token. Updates one row, or none when the lock was lost. */
    final String release;
    /** No parameters. Every lock by name, with whether it is held now by the database clock. */
    final String list;

    LockSql(String schema) {
        String lock = Identifiers.quote(schema) + "." + LOCK;
        this.acquire = """
            INSERT INTO %1$s AS l (name, owner, token, fencing_token, acquired_at, expires_at, updated_at)
            VALUES (?, ?, ?, 1, now(), now() + ? * interval '1 microsecond', now())
            ON CONFLICT (name) DO UPDATE
                SET owner = EXCLUDED.owner, token = EXCLUDED.token, fencing_token = l.fencing_token + 1,
                    acquired_at = now(), expires_at = EXCLUDED.expires_at, updated_at = now()
                WHERE l.token IS NULL OR l.expires_at <= now()
            RETURNING fencing_token, expires_at
            """.formatted(lock);
        this.renew = """
            UPDATE %1$s SET expires_at = now() + ? * interval '1 microsecond', updated_at = now()
            WHERE name = ? AND token = ? AND expires_at > now()
            RETURNING expires_at
            """.formatted(lock);
        this.release = """
            UPDATE %1$s SET owner = NULL, token = NULL, expires_at = now(), updated_at = now()
            WHERE name = ? AND token = ? AND expires_at > now()
            """.formatted(lock);
        this.list = "SELECT name, owner, token IS NOT NULL AND expires_at > now(), fencing_token, acquired_at, expires_at,"
                + " updated_at FROM " + lock + " ORDER BY name";
    }
}
