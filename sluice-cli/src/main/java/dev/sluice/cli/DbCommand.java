package dev.sluice.cli;

import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import dev.sluice.embedded.EmbeddedConnection;
import dev.sluice.embedded.EmbeddedPostgresServer;
import dev.sluice.internal.jdbc.DatabaseUrls;
import java.io.File;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "db", mixinStandardHelpOptions = true,
        description = {"The database the commands use: print its URL, or open psql on it.",
                "Without --database-url that is the embedded server of --data-dir, whose superuser has a "
                        + "random password kept in <data-dir>/sluice-password (docs/security.md)."},
        subcommands = {DbCommand.Url.class, DbCommand.Psql.class})
final class DbCommand {
    /** System property naming the psql program to run instead of the one on the PATH. */
    static final String PSQL_PROPERTY = "sluice.psql";
    private static final String REDACTED = "***";

    private DbCommand() {
    }

    @Command(name = "url", mixinStandardHelpOptions = true,
            description = {"Print the connection URL (JDBC form; --psql for the postgresql:// form psql takes).",
                    "Embedded: the URL of the server running in --data-dir (another sluice command must be running "
                            + "it: its port changes with every start), WITH its password: keep it secret.",
                    "With --database-url: that URL, its password replaced by *** unless --show-password."})
    static final class Url extends Base {
        @Option(names = "--psql", description = "Print the libpq form, postgresql://user:password@host:port/db, "
                + "for psql and other non-Java clients.")
        boolean psql;

        @Option(names = "--show-password", description = "With --database-url: print its password instead of ***.")
        boolean showPassword;

        @Override
        public Integer call() {
            String given = globals().effectiveDatabaseUrl();
            String url;
            if (given == null) {
                EmbeddedConnection c = running(globals().dataDir).orElseThrow(() -> new SluiceException(
                        ErrorCode.INVALID_ARGUMENT, "no embedded PostgreSQL is running in --data-dir "
                        + globals().dataDir.toAbsolutePath() + "; its URL exists only while a sluice command runs it "
                        + "(or use 'sluice db psql', which starts it)"));
                url = psql ? c.uri() : c.jdbcUrl();
            } else {
                ParsedUrl u = ParsedUrl.parse(given);
                url = psql ? u.libpq(showPassword) : u.jdbc(showPassword);
            }
            if (json()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("url", url);
                Output.json(out(), m);
            } else {
                out().println(url);
            }
            return Main.OK;
        }
    }

    @Command(name = "psql", mixinStandardHelpOptions = true,
            description = {"Run psql on the database and wait for it; exits with psql's exit code.",
                    "Embedded: uses the server running in --data-dir, or starts it for the session and stops it after.",
                    "The password goes to psql in the PGPASSWORD environment variable, never on its command line.",
                    "Needs psql on the PATH (Debian: apt-get install postgresql-client)."})
    static final class Psql extends Base {
        @Parameters(paramLabel = "PSQL_ARG", arity = "0..*",
                description = "Further psql arguments, after --, for example: sluice db psql -- -c 'SELECT 1'")
        List<String> psqlArgs = new ArrayList<>();

        @Override
        public Integer call() throws Exception {
            Path program = findPsql();
            String given = globals().effectiveDatabaseUrl();
            EmbeddedPostgresServer started = null;
            String target;
            String password;
            if (given == null) {
                Optional<EmbeddedConnection> live = running(globals().dataDir);
                EmbeddedConnection c;
                if (live.isPresent()) {
                    c = live.get();
                } else {
                    started = startEmbedded(globals().dataDir);
                    c = started.connection();
                }
                target = c.uriWithoutPassword();
                password = c.password();
            } else {
                ParsedUrl u = ParsedUrl.parse(given);
                target = u.libpqWithoutPassword();
                password = u.password();
            }
            try {
                List<String> cmd = new ArrayList<>();
                cmd.add(program.toString());
                cmd.add(target);
                cmd.addAll(psqlArgs);
                ProcessBuilder pb = new ProcessBuilder(cmd).inheritIO();
                pb.environment().remove("PGPASSWORD");
                if (password != null) {
                    pb.environment().put("PGPASSWORD", password);
                }
                return runIgnoringInterrupts(pb);
            } finally {
                if (started != null) {
                    started.close();
                }
            }
        }
    }

    /** The embedded server running in {@code dataDir}, if any. */
    private static Optional<EmbeddedConnection> running(Path dataDir) {
        return EmbeddedConnection.running(dataDir);
    }

    private static EmbeddedPostgresServer startEmbedded(Path dataDir) {
        try {
            return EmbeddedPostgresServer.start(dataDir);
        } catch (RuntimeException e) {
            throw new SluiceException(ErrorCode.EMBEDDED_START_FAILED,
                    "embedded PostgreSQL did not start in " + dataDir.toAbsolutePath() + ": " + e.getMessage(), e);
        }
    }

    /** psql from the {@value #PSQL_PROPERTY} property or the PATH; SLU-0402 when there is none. */
    static Path findPsql() {
        String configured = System.getProperty(PSQL_PROPERTY);
        if (configured != null && !configured.isBlank()) {
            Path p = Path.of(configured);
            if (Files.isExecutable(p) && !Files.isDirectory(p)) {
                return p;
            }
            throw new SluiceException(ErrorCode.TOOL_NOT_FOUND, "psql is not installed at " + configured);
        }
        String path = System.getenv("PATH");
        if (path != null) {
            for (String dir : path.split(File.pathSeparator)) {
                for (String name : List.of("psql", "psql.exe")) {
                    if (dir.isEmpty()) {
                        continue;
                    }
                    Path p = Path.of(dir, name);
                    if (Files.isExecutable(p) && !Files.isDirectory(p)) {
                        return p;
                    }
                }
            }
        }
        throw new SluiceException(ErrorCode.TOOL_NOT_FOUND, "psql is not on the PATH");
    }

    /**
     * Waits for psql. Ctrl-C in the terminal reaches every process of the foreground group: psql
     * uses it to cancel a query, so this JVM ignores it meanwhile rather than stopping the server.
     */
    private static int runIgnoringInterrupts(ProcessBuilder pb) throws IOException, InterruptedException {
        Object previous = null;
        try {
            previous = sun.misc.Signal.handle(new sun.misc.Signal("INT"), sig -> { });
        } catch (IllegalArgumentException | LinkageError e) {
            // No SIGINT on this platform: nothing to ignore.
        }
        try {
            return pb.start().waitFor();
        } finally {
            if (previous instanceof sun.misc.SignalHandler h) {
                sun.misc.Signal.handle(new sun.misc.Signal("INT"), h);
            }
        }
    }

    /**
     * A given database URL taken apart by the driver's own parser, after {@link DatabaseUrls#toJdbc} checked
     * (and, for {@code postgres://}, converted) it, to print it with the password hidden or in libpq form.
     * Values are kept decoded and percent-encoded again on output.
     */
    record ParsedUrl(String hosts, String ports, String database, String user, String password, String sslmode) {

        static ParsedUrl parse(String url) {
            Properties p = org.postgresql.Driver.parseURL(DatabaseUrls.toJdbc(url), null);
            if (p == null) {
                // toJdbc refuses what the driver cannot parse; never echo the URL: it may carry a password.
                throw new SluiceException(ErrorCode.INVALID_DATABASE_URL, "the database URL does not parse");
            }
            return new ParsedUrl(p.getProperty("PGHOST"), p.getProperty("PGPORT"), p.getProperty("PGDBNAME"),
                    p.getProperty("user"), p.getProperty("password"), p.getProperty("sslmode"));
        }

        /** The JDBC form; the password as given or {@value #REDACTED}. */
        String jdbc(boolean showPassword) {
            StringBuilder b = new StringBuilder("jdbc:postgresql://").append(hostPorts()).append('/').append(encode(database));
            char sep = '?';
            if (user != null) {
                b.append(sep).append("user=").append(encode(user));
                sep = '&';
            }
            if (password != null) {
                b.append(sep).append("password=").append(showPassword ? encode(password) : REDACTED);
                sep = '&';
            }
            if (sslmode != null) {
                b.append(sep).append("sslmode=").append(encode(sslmode));
            }
            return b.toString();
        }

        /** The libpq form; the password as given or {@value #REDACTED}. */
        String libpq(boolean showPassword) {
            String userInfo = user == null ? ""
                    : encode(user) + (password == null ? "" : ":" + (showPassword ? encode(password) : REDACTED)) + "@";
            return "postgresql://" + userInfo + hostPorts() + "/" + encode(database)
                    + (sslmode == null ? "" : "?sslmode=" + encode(sslmode));
        }

        /** The libpq form without any password, for a command line. */
        String libpqWithoutPassword() {
            return new ParsedUrl(hosts, ports, database, user, null, sslmode).libpq(false);
        }

        /** host:port pairs, comma-separated for a multi-host URL (both forms take that). */
        private String hostPorts() {
            String[] h = hosts.split(",");
            String[] p = ports == null ? new String[0] : ports.split(",");
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < h.length; i++) {
                b.append(i == 0 ? "" : ",").append(h[i]).append(i < p.length ? ":" + p[i] : "");
            }
            return b.toString();
        }

        /** Percent-encoding both pgjdbc and libpq decode (a space as %20: libpq keeps a '+' as it is). */
        private static String encode(String value) {
            return URLEncoder.encode(value == null ? "" : value, StandardCharsets.UTF_8).replace("+", "%20");
        }

        /** Names the host only: the password never reaches a log through this. */
        @Override
        public String toString() {
            return "ParsedUrl[" + hostPorts() + "/" + database + "]";
        }
    }
}
