package dev.sluice;

import java.util.Objects;

/**
 * A token just created ({@link Tokens#create(TokenRole, String)}): its listing and its secret. The secret is shown
 * only here, once: Sluice stores only its SHA-256 hash, so it cannot be recovered later. {@link #toString()} never
 * contains it, so logging this object does not leak it.
 *
 * @param info   the token as {@link Tokens#list()} shows it
 * @param secret the bearer secret ({@code slu_} and 43 base64url characters)
 */
public record NewToken(TokenInfo info, String secret) {

    /** Checks that both parts are present. */
    public NewToken {
        Objects.requireNonNull(info, "info");
        Objects.requireNonNull(secret, "secret");
    }

    /** The token without its secret: {@code NewToken[info=…, secret=***]}. */
    @Override
    public String toString() {
        return "NewToken[info=" + info + ", secret=***]";
    }
}
