package dev.sluice;

import java.time.Instant;

/**
 * One TTL lock as stored ({@link Sluice#locks()}). A lock's row outlives its holders: after a release or
 * an expiry it stays, keeping the name's fencing token for the next acquisition.
 *
 * @param name         the lock's name
 * @param owner        the owner of the current or last acquisition, or {@code null} once released
 * @param held         whether someone holds it now: acquired, not released, and not past {@code expiresAt}
 *                     by the database clock
 * @param fencingToken the token of the last acquisition (the next one gets one more)
 * @param acquiredAt   when the last acquisition was made
 * @param expiresAt    when the last acquisition expires or expired (the release time once released)
 * @param updatedAt    when the row last changed (acquisition, renewal or release)
 */
public record LockInfo(String name, String owner, boolean held, long fencingToken, Instant acquiredAt, Instant expiresAt,
                       Instant updatedAt) {
}
