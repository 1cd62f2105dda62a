package dev.sluice.internal.token;

import dev.sluice.internal.jdbc.Identifiers;

/**
 * Every statement on {@code api_token}, built once per schema. Table and sequence names come from the constants and
 * the validated schema; every value is a bind parameter. Run only by {@link TokenStore}, the table's one writer.
 */
final class TokenSql {
    static final String API_TOKEN = "api_token";
    /** The identity sequence of {@code api_token.id} (PostgreSQL's default name for it). */
    static final String API_TOKEN_ID_SEQUENCE = "api_token_id_seq";
    /** The columns read into a {@code TokenInfo}, in its order. */
    private static final String INFO = "id, name, role, created_at, revoked_at";

    /**
     * Parameters: name (null: {@code token-<id>}), role, secret hash. The id is drawn first so a generated name can
     * carry it. Returns the new row, or no row when an active token holds the name (or, never in practice, the hash).
     */
    final String create;
    /** No parameters. Every token, newest first. */
    final String list;
    /** Parameter: id. Revokes the active token with that id; returns it, or no row. */
    final String revokeById;
    /** Parameter: name. Revokes the active token with that name; returns it, or no row. */
    final String revokeByName;
    /** Parameter: secret hash. The active token with that hash, or no row (one probe of the unique index). */
    final String authenticate;
    /** No parameters. Whether any token is active. */
    final String anyActive;

    TokenSql(String schema) {
        String q = Identifiers.quote(schema);
        String table = q + "." + API_TOKEN;
        String sequence = q + "." + API_TOKEN_ID_SEQUENCE;
        // ON CONFLICT without a target covers the partial unique index on active names too: a concurrent create of
        // the same name waits for the first one's commit, then inserts nothing.
        this.create = """
            WITH n AS MATERIALIZED (SELECT nextval('%2$s') AS id)
            INSERT INTO %1$s (id, name, role, secret_hash)
            SELECT n.id, coalesce(?, 'token-' || n.id), ?, ? FROM n
            ON CONFLICT DO NOTHING
            RETURNING %3$s
            """.formatted(table, sequence, INFO);
        this.list = "SELECT " + INFO + " FROM " + table + " ORDER BY id DESC";
        this.revokeById = """
            UPDATE %1$s SET revoked_at = now() WHERE id = ? AND revoked_at IS NULL
            RETURNING %2$s
            """.formatted(table, INFO);
        this.revokeByName = """
            UPDATE %1$s SET revoked_at = now() WHERE name = ? AND revoked_at IS NULL
            RETURNING %2$s
            """.formatted(table, INFO);
        this.authenticate = "SELECT " + INFO + " FROM " + table + " WHERE secret_hash = ? AND revoked_at IS NULL";
        this.anyActive = "SELECT EXISTS (SELECT 1 FROM " + table + " WHERE revoked_at IS NULL)";
    }
}
