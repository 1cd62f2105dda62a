package dev.sluice;

import dev.sluice.internal.Engine;
import dev.sluice.internal.text.Echo;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The schema's API tokens ({@code sluice.tokens()}): bearer secrets with a {@link TokenRole}, for the HTTP server and
 * for anything else that must tell callers apart. A secret ({@code slu_} and 43 base64url characters, 32 random
 * bytes) is returned once, by {@link #create}; the database keeps only its SHA-256 hash, so nothing that reads the
 * table (or a backup of it) can act as the token. Nothing here logs a secret or puts one in a message.
 *
 * <pre>{@code
 * NewToken t = sluice.tokens().create(TokenRole.WRITE, "deploy");
 * send(t.secret());                                          // shown once: store it now
 * Optional<TokenInfo> who = sluice.tokens().authenticate(bearer);
 * if (who.isEmpty() || !who.get().role().allows(TokenRole.WRITE)) { refuse(); }
 * sluice.tokens().revoke("deploy");                          // by name, or by id: revoke("3")
 * }</pre>
 *
 * <p>A handle does no I/O; each method is one short statement. Creating and revoking install a missing control plane
 * as queues do (with {@code migrate(false)} it must exist); the reads answer empty without one.
 */
public final class Tokens {
    private final Engine engine;

    Tokens(Engine engine) {
        this.engine = engine;
    }

    /**
     * Creates an active token and returns it with its secret, which is shown only here.
     *
     * @param role what the token may do
     * @param name a name (a Sluice name, {@link Sluice#validateName}, not made only of digits, which would read as an
     *             id), unique among active tokens; null for a generated {@code token-<id>}
     * @throws SluiceException {@link ErrorCode#INVALID_NAME} for a bad name (before any round trip),
     *                         {@link ErrorCode#TOKEN_NAME_TAKEN} when an active token has that name (nothing created)
     */
    public NewToken create(TokenRole role, String name) {
        Objects.requireNonNull(role, "role");
        if (name != null) {
            Sluice.validateName("token", name);
            if (allDigits(name)) {
                throw new SluiceException(ErrorCode.INVALID_NAME, "token name '" + name
                        + "' must not be only digits: it would read as a token id");
            }
        }
        engine.requireControlPlane();
        return engine.tokenStore().create(role, name).orElseThrow(() -> new SluiceException(ErrorCode.TOKEN_NAME_TAKEN,
                name == null ? "no free generated token name after several tries; give the token a name"
                        : "an active token is already named '" + name + "'"));
    }

    /** Every token, revoked ones included, newest first; never a secret. Empty when the control plane is not installed. */
    public List<TokenInfo> list() {
        return engine.controlPlaneInstalled() ? engine.tokenStore().list() : List.of();
    }

    /**
     * Revokes an active token: from now on its secret authenticates nothing, and its name is free again. The token
     * stays listed, with its revocation time.
     *
     * @param idOrName the token's id (digits only) or its name
     * @return the token as revoked
     * @throws SluiceException {@link ErrorCode#TOKEN_NOT_FOUND} when no active token has that id or name,
     *                         {@link ErrorCode#INVALID_NAME} for a text that is neither an id nor a valid name,
     *                         {@link ErrorCode#INVALID_ARGUMENT} for null
     */
    public TokenInfo revoke(String idOrName) {
        if (idOrName == null) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "revoke needs a token id or name");
        }
        Optional<TokenInfo> revoked;
        if (allDigits(idOrName)) {
            long id;
            try {
                id = Long.parseLong(idOrName);
            } catch (NumberFormatException e) {
                throw notFound(idOrName);
            }
            engine.requireControlPlane();
            revoked = engine.tokenStore().revoke(id);
        } else {
            Sluice.validateName("token", idOrName);
            engine.requireControlPlane();
            revoked = engine.tokenStore().revoke(idOrName);
        }
        return revoked.orElseThrow(() -> notFound(idOrName));
    }

    /**
     * The active token whose secret this is. Empty for a revoked or unknown token and for anything that is not of a
     * secret's form (null, the wrong prefix or length, characters outside base64url), the latter without a round
     * trip. The secret is never logged.
     */
    public Optional<TokenInfo> authenticate(String secret) {
        if (!engine.tokenStore().wellFormedSecret(secret) || !engine.controlPlaneInstalled()) {
            return Optional.empty();
        }
        return engine.tokenStore().authenticate(secret);
    }

    /** Whether any token is active (false when the control plane is not installed). */
    public boolean anyActive() {
        return engine.controlPlaneInstalled() && engine.tokenStore().anyActive();
    }

    private static SluiceException notFound(String idOrName) {
        return new SluiceException(ErrorCode.TOKEN_NOT_FOUND, "no active token has the id or name '" + Echo.of(idOrName) + "'");
    }

    private static boolean allDigits(String s) {
        if (s.isEmpty()) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') {
                return false;
            }
        }
        return true;
    }

    @Override
    public String toString() {
        return "Tokens[" + engine.schema() + "]";
    }
}
