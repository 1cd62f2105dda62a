package dev.sluice.internal.token;

import dev.sluice.NewToken;
import dev.sluice.TokenInfo;
import dev.sluice.TokenRole;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.jdbc.Sql;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.util.Base64;
import java.util.List;
import java.util.Optional;

/**
 * The API tokens of one schema: the one writer of {@code api_token} ({@link TokenSql}). Secrets are made here and
 * never stored, logged or put in a message: the table keeps the SHA-256 of the whole secret string. Each operation is
 * one autocommit statement. Input is validated by the caller ({@code dev.sluice.Tokens}). See docs/security.md.
 */
public final class TokenStore {
    /** What every secret starts with (so a leaked one is recognisable, and a stranger string is refused at once). */
    public static final String PREFIX = "slu_";
    /** Random bytes in a secret. */
    static final int SECRET_BYTES = 32;
    /** The length of a secret: the prefix and 32 bytes in unpadded base64url (43 characters). */
    public static final int SECRET_LENGTH = PREFIX.length() + 43;
    /** Tries of a generated name that an active token (named so by hand) already holds: each draws a new id. */
    private static final int GENERATED_NAME_TRIES = 3;

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Base64.Encoder BASE64URL = Base64.getUrlEncoder().withoutPadding();

    private final Db db;
    private final TokenSql sql;

    /** The token store of one installation schema (statements built here, once). */
    public TokenStore(Db db, String schema) {
        this.db = db;
        this.sql = new TokenSql(schema);
    }

    /**
     * Creates a token with a fresh secret; {@code name} null gives {@code token-<id>}. Empty when an active token
     * already holds the (given) name.
     */
    public Optional<NewToken> create(TokenRole role, String name) {
        for (int attempt = 1; ; attempt++) {
            String secret = newSecret();
            byte[] hash = hash(secret);
            Optional<TokenInfo> made = db.autoCommit("create an API token", c -> Sql.first(c, sql.create, TokenStore::info,
                    name == null ? new Sql.Null(java.sql.Types.VARCHAR) : name, role.text(), hash));
            if (made.isPresent()) {
                return Optional.of(new NewToken(made.get(), secret));
            }
            if (name != null || attempt >= GENERATED_NAME_TRIES) {
                return Optional.empty();
            }
        }
    }

    /** Every token, revoked ones included, newest first. */
    public List<TokenInfo> list() {
        return db.autoCommitReplayable("list API tokens", c -> Sql.list(c, sql.list, TokenStore::info));
    }

    /** Revokes the active token with this id; empty when there is none. */
    public Optional<TokenInfo> revoke(long id) {
        return db.autoCommit("revoke API token " + id, c -> Sql.first(c, sql.revokeById, TokenStore::info, id));
    }

    /** Revokes the active token with this (valid) name; empty when there is none. */
    public Optional<TokenInfo> revoke(String name) {
        return db.autoCommit("revoke API token '" + name + "'", c -> Sql.first(c, sql.revokeByName, TokenStore::info, name));
    }

    /**
     * The active token whose secret this is; empty for anything else. A string that is not of the secret's form
     * (prefix, length, alphabet) is refused without a round trip. The secret is never logged or put in a message.
     */
    public Optional<TokenInfo> authenticate(String secret) {
        if (!wellFormed(secret)) {
            return Optional.empty();
        }
        byte[] hash = hash(secret);
        return db.autoCommitReplayable("authenticate an API token", c -> Sql.first(c, sql.authenticate, TokenStore::info, hash));
    }

    /** Whether any token is active. */
    public boolean anyActive() {
        return db.autoCommitReplayable("look for active API tokens", c -> Sql.first(c, sql.anyActive, rs -> rs.getBoolean(1)).orElse(false));
    }

    /** Whether {@code s} has the form of a secret ({@code slu_} and 43 base64url characters); no I/O. */
    public boolean wellFormedSecret(String s) {
        return wellFormed(s);
    }

    /** Whether {@code s} has the form of a secret: {@code slu_} and 43 base64url characters. */
    static boolean wellFormed(String s) {
        if (s == null || s.length() != SECRET_LENGTH || !s.startsWith(PREFIX)) {
            return false;
        }
        for (int i = PREFIX.length(); i < s.length(); i++) {
            char ch = s.charAt(i);
            boolean ok = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_';
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    /** A fresh secret: the prefix and 32 bytes of {@link SecureRandom} in unpadded base64url. */
    static String newSecret() {
        byte[] bytes = new byte[SECRET_BYTES];
        RANDOM.nextBytes(bytes);
        return PREFIX + BASE64URL.encodeToString(bytes);
    }

    /**
     * The stored form of a secret: SHA-256 of the whole string. A fast hash is right here, unlike for passwords: the
     * secret carries 256 random bits, so no dictionary or brute-force search can find it from its hash, and a fast
     * hash lets every request authenticate with one probe of the unique index on {@code secret_hash}.
     */
    static byte[] hash(String secret) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(secret.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    private static TokenInfo info(ResultSet rs) throws SQLException {
        Timestamp revoked = rs.getTimestamp(5);
        return new TokenInfo(rs.getLong(1), rs.getString(2), TokenRole.parse(rs.getString(3)), rs.getTimestamp(4).toInstant(),
                revoked == null ? null : revoked.toInstant());
    }
}
