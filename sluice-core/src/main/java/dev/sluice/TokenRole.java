package dev.sluice;

import dev.sluice.internal.text.Echo;
import java.util.Locale;
import java.util.Objects;

/**
 * The role of an API token ({@link Tokens}). Roles are ordered: {@code read < write < admin}, and a role allows
 * everything the roles below it allow ({@link #allows(TokenRole)}).
 *
 * <ul>
 *   <li>{@link #READ}: lists and reads;</li>
 *   <li>{@link #WRITE}: also produces, consumes, enqueues and resolves claims;</li>
 *   <li>{@link #ADMIN}: also registers, destroys, redrives, purges, rewinds, and manages tokens.</li>
 * </ul>
 */
public enum TokenRole {
    /** Lists and reads. */
    READ,
    /** Reads, and produces, consumes, enqueues and resolves claims. */
    WRITE,
    /** Everything, including operator actions. */
    ADMIN;

    /** Whether a token of this role may do what needs {@code needed} (this role is {@code needed} or above it). */
    public boolean allows(TokenRole needed) {
        Objects.requireNonNull(needed, "needed");
        return compareTo(needed) >= 0;
    }

    /**
     * The role named by {@code text}: {@code read}, {@code write} or {@code admin}, in any case.
     *
     * @throws SluiceException {@link ErrorCode#INVALID_ARGUMENT} for anything else (null included)
     */
    public static TokenRole parse(String text) {
        if (text != null) {
            for (TokenRole r : values()) {
                if (r.text().equalsIgnoreCase(text)) {
                    return r;
                }
            }
        }
        throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "a token role is read, write or admin (got "
                + (text == null ? "null" : "'" + Echo.of(text) + "'") + ")");
    }

    /** The role as stored and printed, in lower case: {@code read}, {@code write} or {@code admin}. */
    public String text() {
        return name().toLowerCase(Locale.ROOT);
    }
}
