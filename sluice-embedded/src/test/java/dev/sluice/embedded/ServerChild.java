package dev.sluice.embedded;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;

/**
 * A child JVM for {@link EmbeddedServerSecurityTest}: starts the embedded server in the data
 * directory given as the first argument, writes a row, prints {@code READY}, then waits to be killed.
 */
public final class ServerChild {
    private ServerChild() {
    }

    public static void main(String[] args) throws Exception {
        EmbeddedPostgresServer pg = EmbeddedPostgresServer.start(Path.of(args[0]));
        try (Connection c = pg.dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS before_kill (v int)");
            s.execute("INSERT INTO before_kill VALUES (7)");
        }
        System.out.println("READY");
        System.out.flush();
        // Blocks until the parent kills this JVM (stdin stays open and silent).
        System.in.read();
    }
}
