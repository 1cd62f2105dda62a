package dev.sluice.internal.catalog;

/**
 * Every statement on {@code stream_config} and {@code stream_config_log}, built once per installation schema
 * ({@code q} is the quoted schema; every value is a bind parameter). {@link StreamCatalog} is their only user.
 */
final class StreamSql {
    /**
     * The columns {@link StreamRows#info} reads, plus the family version from the migration ledger. Settings added
     * after the first release without a column of their own ({@code delivery_log_retention}) are read from the
     * stored document; a document from before them has no such key and reads as the default.
     */
    private static final String COLUMNS = """
            s.id, s.name, s.partition_size, s.retention_ttl_ns, s.allow_drop_past_committed, s.idempotency_key_ttl_ns,
            s.empty_compaction_head_ttl_ns, s.delivery_log_mode, s.max_payload_bytes, s.created_at, s.updated_at,
            s.config ->> 'delivery_log_retention' AS delivery_log_retention,
            (SELECT coalesce(max(m.version), 0) FROM %1$s.migration_log m WHERE m.stream_id = s.id) AS family_version""";

    /** Every stream, by name. */
    final String list;
    /** One stream by name. Parameter: name. */
    final String byName;
    /** One stream by name, its row locked for the transaction. Parameter: name. */
    final String byNameForUpdate;
    /**
     * A new stream of the schema's installation. Parameters: name, then the config columns as
     * {@link StreamRows#bindConfig} binds them. Returns the id.
     */
    final String insert;
    /** Replaces a stream's mutable config. Parameters: the config columns ({@link StreamRows#bindConfig}), id. */
    final String update;
    /** Parameters: new name, id. */
    final String rename;
    /** Deletes the config row (its groups and log rows cascade). Parameter: id. */
    final String delete;
    /** One entry of the declaration trail. Parameters: stream id, name, action, config document, declared by. */
    final String log;

    StreamSql(String q) {
        String select = "SELECT " + COLUMNS.formatted(q) + " FROM " + q + ".stream_config s";
        this.list = select + " ORDER BY s.name";
        this.byName = select + " WHERE s.name = ?";
        this.byNameForUpdate = byName + " FOR UPDATE OF s";
        this.insert = """
                INSERT INTO %1$s.stream_config (system_id, name, partition_size, retention_ttl_ns, allow_drop_past_committed,
                    idempotency_key_ttl_ns, empty_compaction_head_ttl_ns, delivery_log_mode, max_payload_bytes, config)
                SELECT id, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb FROM %1$s.system_config WHERE name = 'default'
                RETURNING id""".formatted(q);
        this.update = """
                UPDATE %1$s.stream_config SET partition_size = ?, retention_ttl_ns = ?, allow_drop_past_committed = ?,
                    idempotency_key_ttl_ns = ?, empty_compaction_head_ttl_ns = ?, delivery_log_mode = ?,
                    max_payload_bytes = ?, config = ?::jsonb, updated_at = now()
                WHERE id = ?""".formatted(q);
        this.rename = "UPDATE " + q + ".stream_config SET name = ?, updated_at = now() WHERE id = ?";
        this.delete = "DELETE FROM " + q + ".stream_config WHERE id = ?";
        this.log = "INSERT INTO " + q + ".stream_config_log (stream_id, name, action, config, declared_by)"
                + " VALUES (?, ?, ?, ?::jsonb, ?)";
    }
}
