package dev.sluice.internal.jdbc;

import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import dev.sluice.internal.text.Echo;
import java.util.regex.Pattern;

/** Validation and quoting of the only identifiers we build: the schema name and id-suffixed table names. */
public final class Identifiers {
    private static final Pattern SCHEMA = Pattern.compile("^[a-z_][a-z0-9_]{0,62}$");

    private Identifiers() {
    }

    /** Validates an installation schema name. */
    public static String validateSchema(String schema) {
        if (schema == null || !SCHEMA.matcher(schema).matches() || schema.startsWith("pg_")) {
            throw new SluiceException(ErrorCode.INVALID_SCHEMA_NAME,
                    "schema name '" + Echo.of(schema) + "' must match ^[a-z_][a-z0-9_]{0,62}$ and not start with pg_");
        }
        return schema;
    }

    /** Double-quotes an identifier that has already been validated. */
    public static String quote(String identifier) {
        return '"' + identifier.replace("\"", "\"\"") + '"';
    }
}
