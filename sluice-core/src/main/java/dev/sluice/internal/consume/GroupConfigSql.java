package dev.sluice.internal.consume;

/**
 * Owner of the schema's group-level tables — {@code consumer_group_config} and {@code stream_reader_offset} — built
 * once per schema ({@link GroupRegistry}, {@link ReaderOffsets}). The group's consumer worker is declared through
 * {@code internal.fleet.WorkerConfigs} in the registration's transaction; the stream's own tables have their owners
 * in {@link ConsumeSql}.
 */
final class GroupConfigSql {
    /** Serialises registrations of one stream's groups. Parameter: {@link #groupsLockKey}. */
    static final String LOCK_GROUPS = "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))";

    private final String schema;

    /** A group's id and config, locked. Parameters: stream id, name. */
    final String selectForUpdate;
    /** Replaces a group's config. Parameters: config (json), id. */
    final String updateConfig;
    /** Creates a group. Parameters: stream id, name, config (json). Returns its id. */
    final String insertGroup;
    /** A reader's saved offset. Parameters: stream id, name. */
    final String readerOffset;
    /** Saves a reader's offset monotonically; returns the stored value. Parameters: stream id, name, offset. */
    final String saveReaderOffset;

    GroupConfigSql(String schema, String q) {
        this.schema = schema;
        this.selectForUpdate = "SELECT id, config::text FROM " + q
                + ".consumer_group_config WHERE stream_id = ? AND name = ? FOR UPDATE";
        this.updateConfig = "UPDATE " + q
                + ".consumer_group_config SET config = ?::jsonb, updated_at = now() WHERE id = ?";
        this.insertGroup = "INSERT INTO " + q
                + ".consumer_group_config (stream_id, name, config) VALUES (?, ?, ?::jsonb) RETURNING id";
        this.readerOffset = "SELECT \"offset\" FROM " + q
                + ".stream_reader_offset WHERE stream_id = ? AND name = ?";
        this.saveReaderOffset = "INSERT INTO " + q + ".stream_reader_offset AS r"
                + " (stream_id, name, \"offset\") VALUES (?, ?, ?) ON CONFLICT (stream_id, name) DO UPDATE"
                + " SET \"offset\" = GREATEST(r.\"offset\", EXCLUDED.\"offset\"), updated_at = now() RETURNING \"offset\"";
    }

    /** The advisory key text of {@link #LOCK_GROUPS} for one stream. */
    String groupsLockKey(long streamId) {
        return "sluice.groups:" + schema + ":" + streamId;
    }
}
