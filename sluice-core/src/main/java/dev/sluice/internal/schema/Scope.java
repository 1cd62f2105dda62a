package dev.sluice.internal.schema;

/** A migration scope: the control plane of a schema, or one stream's family of tables. */
public enum Scope {
    SYSTEM("system"),
    STREAM("stream");

    private final String sqlValue;

    Scope(String sqlValue) {
        this.sqlValue = sqlValue;
    }

    /** The value of {@code migration_log.scope}. */
    public String sqlValue() {
        return sqlValue;
    }
}
