package dev.sluice.internal.consume;

import dev.sluice.internal.schema.FamilyTables;

/**
 * Owner of {@code binding_config_<id>} and {@code binding_config_log_<id>}: a group's routing-key patterns,
 * applied forward from a message id, and the log of their declarations; built once per stream
 * ({@link ConsumeSql#of}).
 */
final class BindingSql {
    /** The group's bindings with the head from the same snapshot: exact for ids up to it. Parameter: group. */
    final String bindings;

    /** The group's active patterns. Parameter: group. */
    final String activePatterns;

    /** Ends removed patterns at a message id. Parameters: from id, group, patterns. */
    final String endPatterns;

    /** Adds a pattern from a message id. Parameters: group, pattern, its regex, from id. */
    final String addPattern;

    /** Logs a declaration of the binding set. Parameters: group, patterns (json), outcome, from id, declared by. */
    final String logPatterns;

    BindingSql(FamilyTables t) {
        this.bindings = "SELECT pattern, from_message_id, until_message_id, " + MessageSql.head(t) + " FROM " + t.bindingConfig()
                + " WHERE consumer_group_id = ?";
        this.activePatterns = "SELECT pattern FROM " + t.bindingConfig()
                + " WHERE consumer_group_id = ? AND until_message_id IS NULL";
        this.endPatterns = "UPDATE " + t.bindingConfig() + " SET until_message_id = ?,"
                + " removed_at = now() WHERE consumer_group_id = ? AND until_message_id IS NULL AND pattern = ANY(?)";
        this.addPattern = "INSERT INTO " + t.bindingConfig()
                + " (consumer_group_id, pattern, pattern_regex, from_message_id) VALUES (?, ?, ?, ?)";
        this.logPatterns = "INSERT INTO " + t.bindingConfigLog()
                + " (consumer_group_id, patterns, outcome, from_message_id, declared_by) VALUES (?, ?::jsonb, ?, ?, ?)";
    }
}
