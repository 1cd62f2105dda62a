package dev.sluice.cli;

import dev.sluice.ErrorCode;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.embedded.EmbeddedPostgresServer;

/** The client a command runs with: your database, or the embedded one started for the command. */
final class CliContext implements AutoCloseable {
    private final EmbeddedPostgresServer server;
    private final Sluice sluice;
    private final String url;

    private CliContext(EmbeddedPostgresServer server, Sluice sluice, String url) {
        this.server = server;
        this.sluice = sluice;
        this.url = url;
    }

    /** The JDBC URL the command runs against (the embedded server's when none was given). */
    String jdbcUrl() {
        return url;
    }

    /** A client for a one-shot command: it never competes for the schema's manager (maintenance off). */
    static CliContext open(GlobalOptions options, boolean allowDestroy) {
        return open(options, allowDestroy, false);
    }

    /**
     * A client; {@code maintenance} says whether it competes for the schema's manager once it starts a running
     * part. Only long-running commands (such as {@code schedule serve}) should: a one-shot command that won the
     * election would hold it for a fleet lease after it exits, and a pass could run in a command that just
     * lists something.
     */
    static CliContext open(GlobalOptions options, boolean allowDestroy, boolean maintenance) {
        String url = options.effectiveDatabaseUrl();
        EmbeddedPostgresServer server = null;
        if (url == null) {
            try {
                server = EmbeddedPostgresServer.start(options.dataDir);
            } catch (RuntimeException e) {
                throw new SluiceException(ErrorCode.EMBEDDED_START_FAILED,
                        "embedded PostgreSQL did not start in " + options.dataDir.toAbsolutePath() + ": " + e.getMessage(), e);
            }
            url = server.jdbcUrl();
        }
        try {
            Sluice sluice = Sluice.builder().jdbcUrl(url).schema(options.schema).forceSchema(options.forceSchema)
                    .allowDestroy(allowDestroy).maintenance(maintenance).build();
            return new CliContext(server, sluice, url);
        } catch (RuntimeException e) {
            if (server != null) {
                server.close();
            }
            throw e;
        }
    }

    Sluice sluice() {
        return sluice;
    }

    @Override
    public void close() {
        sluice.close();
        if (server != null) {
            server.close();
        }
    }
}
