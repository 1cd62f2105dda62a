package dev.sluice.server.http;

import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import dev.sluice.TokenRole;
import io.javalin.http.Context;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * Who may do what. Every route names the role it needs ({@link TokenRole}: read &lt; write &lt; admin) and
 * the request's bearer token must carry at least that role. In open mode (no token exists and the server
 * binds loopback only) a request without a token is let in as admin; one with a token is checked. Verified tokens are remembered for
 * {@link #CACHE_NANOS} so that a busy client costs no lookup per request; a revoked token is refused at
 * the latest that long after its revocation (at once when revoked through this server).
 */
public final class Access {
    /** How long a verified token is trusted without asking the database again. */
    public static final long CACHE_NANOS = 2_000_000_000L;
    private static final int MAX_TOKEN_LENGTH = 256;
    private static final int MAX_CACHED = 10_000;

    private record Verified(TokenRole role, long until) {
    }

    private final Function<String, Optional<TokenRole>> authenticate;
    private final boolean loopback;
    private final BooleanSupplier noTokens;
    private final ConcurrentHashMap<String, Verified> cache = new ConcurrentHashMap<>();
    private volatile boolean openCached;
    private volatile long openValidUntil;

    /**
     * @param authenticate the role of an active token's secret (empty: unknown or revoked)
     * @param loopback     whether the server binds loopback only (open mode is possible)
     * @param noTokens     whether no active token exists (asked at most every {@link #CACHE_NANOS})
     */
    public Access(Function<String, Optional<TokenRole>> authenticate, boolean loopback, BooleanSupplier noTokens) {
        this.authenticate = authenticate;
        this.loopback = loopback;
        this.noTokens = noTokens;
    }

    /**
     * Whether requests without a token are let in now: on loopback while no token exists. Creating the first
     * token ends open mode within {@link #CACHE_NANOS}.
     */
    public boolean open() {
        if (!loopback) {
            return false;
        }
        long now = System.nanoTime();
        if (now - openValidUntil >= 0) {
            openCached = noTokens.getAsBoolean();
            openValidUntil = now + CACHE_NANOS;
        }
        return openCached;
    }

    /** Refuses the request (401 or 403, coded) unless its token carries {@code needed}. */
    public void require(Context ctx, TokenRole needed) {
        TokenRole have = role(ctx);
        if (!have.allows(needed)) {
            throw new SluiceException(ErrorCode.FORBIDDEN, "this request needs the " + needed.text() + " role; the token has "
                    + have.text());
        }
    }

    /** The role of the request's token (admin in open mode); UNAUTHORIZED without a valid one. */
    public TokenRole role(Context ctx) {
        String header = ctx.header("Authorization");
        if (header == null || header.isEmpty()) {
            if (open()) {
                return TokenRole.ADMIN;
            }
            throw new SluiceException(ErrorCode.UNAUTHORIZED, "this server requires a bearer token");
        }
        if (header.length() > MAX_TOKEN_LENGTH + 7 || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            throw new SluiceException(ErrorCode.UNAUTHORIZED, "the Authorization header is not 'Bearer <token>'");
        }
        String secret = header.substring(7).trim();
        long now = System.nanoTime();
        Verified v = cache.get(secret);
        if (v != null && now - v.until() < 0) {
            return v.role();
        }
        Optional<TokenRole> role = authenticate.apply(secret);
        if (role.isEmpty()) {
            cache.remove(secret);
            throw new SluiceException(ErrorCode.UNAUTHORIZED, "the bearer token is unknown or revoked");
        }
        if (cache.size() >= MAX_CACHED) {
            cache.clear(); // bounded: a flood of distinct valid tokens only costs lookups
        }
        cache.put(secret, new Verified(role.get(), now + CACHE_NANOS));
        return role.get();
    }

    /** Forgets every verified token (after a revocation through this server). */
    public void forget() {
        cache.clear();
        openValidUntil = System.nanoTime();
    }
}
