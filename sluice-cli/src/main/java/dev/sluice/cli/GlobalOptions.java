package dev.sluice.cli;

import dev.sluice.internal.jdbc.DatabaseUrls;
import java.nio.file.Path;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

/** Options every command accepts (inherited by all subcommands). */
public final class GlobalOptions {
    /** Output formats. */
    public enum Format { text, json }

    @Option(names = "--database-url", scope = ScopeType.INHERIT, paramLabel = "URL",
            description = "JDBC URL of your PostgreSQL (e.g. jdbc:postgresql://localhost/app?user=me; "
                    + "postgres://user:password@host/db is converted). "
                    + "Default: $SLUICE_DATABASE_URL, else an embedded PostgreSQL in --data-dir.")
    String databaseUrl;

    @Option(names = "--data-dir", scope = ScopeType.INHERIT, paramLabel = "DIR", defaultValue = ".sluice",
            description = "Data directory of the embedded PostgreSQL when no --database-url is given (default: ${DEFAULT-VALUE}).")
    Path dataDir;

    @Option(names = "--schema", scope = ScopeType.INHERIT, paramLabel = "SCHEMA", defaultValue = "sluice",
            description = "Installation schema (default: ${DEFAULT-VALUE}).")
    String schema;

    @Option(names = "--force-schema", scope = ScopeType.INHERIT,
            description = "Install Sluice into --schema even though it holds other objects and no Sluice installation "
                    + "(refused otherwise, with SLU-0116; an empty schema needs no forcing).")
    boolean forceSchema;

    @Option(names = {"-o", "--output"}, scope = ScopeType.INHERIT, paramLabel = "FORMAT", defaultValue = "text",
            description = "Output format: text or json (default: ${DEFAULT-VALUE}).")
    Format output;

    @Option(names = "--debug", scope = ScopeType.INHERIT,
            description = "Print the stack trace of a failure (also SLUICE_DEBUG=1); passwords stay redacted.")
    boolean debug;

    /**
     * The JDBC URL from the flag or the environment ({@code postgres://} URLs converted), or null for the
     * embedded server; a URL that cannot be used is refused with INVALID_DATABASE_URL, its password redacted.
     */
    String effectiveDatabaseUrl() {
        String given = rawDatabaseUrl();
        return given == null ? null : DatabaseUrls.toJdbc(given);
    }

    /** The URL as given (flag, else environment), or null: only to scrub its password from messages. */
    String rawDatabaseUrl() {
        if (databaseUrl != null && !databaseUrl.isBlank()) {
            return databaseUrl;
        }
        String env = System.getenv("SLUICE_DATABASE_URL");
        return env == null || env.isBlank() ? null : env;
    }

    boolean json() {
        return output == Format.json;
    }

    /** Whether failures print their stack trace ({@code --debug} or {@code SLUICE_DEBUG=1}). */
    boolean debug() {
        String env = System.getenv("SLUICE_DEBUG");
        return debug || "1".equals(env) || "true".equalsIgnoreCase(env);
    }
}
