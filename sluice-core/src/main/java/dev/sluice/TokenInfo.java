package dev.sluice;

import java.time.Instant;
import java.util.Objects;

/**
 * An API token as listed ({@link Tokens#list()}): never its secret, which Sluice does not keep.
 *
 * @param id        the token's id
 * @param name      its name (unique among active tokens)
 * @param role      what it may do
 * @param createdAt when it was created (database clock)
 * @param revokedAt when it was revoked, or {@code null} while it is active
 */
public record TokenInfo(long id, String name, TokenRole role, Instant createdAt, Instant revokedAt) {

    /** Checks that the name, role and creation time are present. */
    public TokenInfo {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(role, "role");
        Objects.requireNonNull(createdAt, "createdAt");
    }

    /** Whether the token is active (not revoked): only active tokens authenticate. */
    public boolean active() {
        return revokedAt == null;
    }
}
