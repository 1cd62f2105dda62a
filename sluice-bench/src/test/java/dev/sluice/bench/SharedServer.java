package dev.sluice.bench;

import dev.sluice.embedded.EmbeddedPostgresServer;

/**
 * One embedded server for the scenario tests of this JVM, instead of one per class: each scenario runs in
 * schemas of its own and drops them ({@link BenchAssertions#assertNoBenchSchemaLeft} checks the whole
 * server, so also what earlier classes left). Started on first use, stopped and deleted by the server's
 * own shutdown hook at JVM exit. The lab (it restarts PostgreSQL) and the idle benchmark (it starts its
 * own server) keep theirs.
 */
public final class SharedServer {
    private static EmbeddedPostgresServer server;

    private SharedServer() {
    }

    public static synchronized EmbeddedPostgresServer get() {
        if (server == null) {
            server = EmbeddedPostgresServer.startTemporary();
        }
        return server;
    }
}
