package dev.sluice.bench.lab;

import dev.sluice.embedded.EmbeddedPostgresServer;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What loads the server during a run, per statement: the lab's embedded PostgreSQL is started with
 * {@code pg_stat_statements}, and after the drain the statements that took the most execution time are read (the
 * summary's {@code server_statements}: calls, total seconds, mean milliseconds, share of all statement time, and
 * the statement's first characters). On a server of your own ({@code --database-url}) the list is empty unless
 * the extension is loaded there; the lab never installs it on your server.
 */
final class ServerStatements {
    /** Statements listed in the summary. */
    static final int TOP = 12;
    /** Characters of a statement's text shown (whitespace folded). */
    private static final int TEXT_CHARS = 110;

    private static final String TOP_STATEMENTS = """
        SELECT left(regexp_replace(s.query, '\\s+', ' ', 'g'), %d), s.calls, s.total_exec_time,
               s.total_exec_time / greatest(s.calls, 1), s.total_exec_time / nullif(sum(s.total_exec_time) OVER (), 0)
        FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid AND d.datname = current_database()
        ORDER BY s.total_exec_time DESC LIMIT %d
        """.formatted(TEXT_CHARS, TOP);

    private ServerStatements() {
    }

    /** Restarts a fresh embedded server with the extension's library loaded; returns the running server. */
    static EmbeddedPostgresServer preload(EmbeddedPostgresServer server, Path dataDir, int port, Connection c)
            throws SQLException, InterruptedException {
        try (Statement s = c.createStatement()) {
            s.execute("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'");
            s.execute("ALTER SYSTEM SET pg_stat_statements.track = 'top'");
        }
        c.close();
        server.close();
        Thread.sleep(500);
        return EmbeddedPostgresServer.start(dataDir, port);
    }

    /** Creates the extension where its library is loaded (the embedded server); false where it is not. */
    static boolean install(Connection c) {
        try (Statement s = c.createStatement()) {
            s.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
            s.execute("SELECT pg_stat_statements_reset()");
            return true;
        } catch (SQLException e) {
            return false;
        }
    }

    /** The statements that took the most time, most first; empty without the extension. */
    static List<Map<String, Object>> top(Connection c) {
        List<Map<String, Object>> out = new ArrayList<>();
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(TOP_STATEMENTS)) {
            while (rs.next()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("calls", rs.getLong(2));
                m.put("total_s", Math.round(rs.getDouble(3) / 100.0) / 10.0);
                m.put("mean_ms", Math.round(rs.getDouble(4) * 100.0) / 100.0);
                m.put("share", Math.round(rs.getDouble(5) * 1000.0) / 1000.0);
                m.put("statement", clean(rs.getString(1)));
                out.add(m);
            }
        } catch (SQLException e) {
            return List.of();
        }
        return out;
    }

    /** A statement's text for the summary: control characters out (the text is shown as is). */
    static String clean(String text) {
        return text == null ? "" : text.replaceAll("\\p{Cntrl}", " ");
    }
}
