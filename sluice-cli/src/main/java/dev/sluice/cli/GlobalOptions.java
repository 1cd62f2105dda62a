package dev.sluice.cli;

import java.nio.file.Path;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

/** Options every command accepts (inherited by all subcommands). */
public final class GlobalOptions {
    /** Output formats. */
    public enum Format { text, json }

    @Option(names = "--database-url", scope = ScopeType.INHERIT, paramLabel = "URL",
            description = "JDBC URL of your PostgreSQL (e.g. jdbc:postgresql://localhost/app?user=me). "
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

    /** The database URL from the flag or the environment, or null for the embedded server. */
    String effectiveDatabaseUrl() {
        if (databaseUrl != null && !databaseUrl.isBlank()) {
            return databaseUrl;
        }
        String env = System.getenv("SLUICE_DATABASE_URL");
        return env == null || env.isBlank() ? null : env;
    }

    boolean json() {
        return output == Format.json;
    }
}
