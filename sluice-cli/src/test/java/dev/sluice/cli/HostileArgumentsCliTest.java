package dev.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Hostile command lines: every argument problem is a coded error (never a stack trace), nothing written
 * by anyone can drive the operator's terminal, echoed input is cut, and every command answers --help.
 */
@SluiceTest
class HostileArgumentsCliTest {
    static final String ESC = "\u001b";
    static final String TITLE = ESC + "]0;owned\u0007";
    static final String CLEAR = ESC + "[2J";

    static CliTest.Run run(TestDatabase db, String schema, String... args) {
        return CliTest.run(db, schema, args);
    }

    static void expectCode(CliTest.Run run, String code) {
        assertThat(run.exit()).as(run.out() + run.err()).isEqualTo(Main.FAILURE);
        assertThat(run.err()).contains("[" + code + "]").doesNotContain("\tat ").doesNotContain("Exception");
    }

    static long scalar(TestDatabase db, String sql) throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Test
    void everyCommandAndSubcommandAnswersHelp() {
        List<List<String>> paths = new ArrayList<>();
        walk(new CommandLine(new Main()), new ArrayList<>(), paths);
        assertThat(paths).as("the tree includes the nested bench lab").contains(List.of("bench", "lab"));
        assertThat(paths.size()).isGreaterThan(40);
        for (List<String> path : paths) {
            for (String flag : List.of("--help", "-h")) {
                List<String> args = new ArrayList<>(path);
                args.add(flag);
                CliTest.Run r = CliTest.raw(args.toArray(String[]::new));
                assertThat(r.exit()).as(args + ": " + r.err()).isZero();
                assertThat(r.out()).as(String.valueOf(args))
                        .contains("Usage: sluice" + (path.isEmpty() ? "" : " " + String.join(" ", path)) + " ");
            }
        }
    }

    private static void walk(CommandLine cl, List<String> path, List<List<String>> into) {
        into.add(List.copyOf(path));
        cl.getSubcommands().forEach((name, sub) -> {
            if (!sub.getCommandName().equals(name)) {
                return; // an alias
            }
            List<String> next = new ArrayList<>(path);
            next.add(name);
            walk(sub, next, into);
        });
    }

    @Test
    void oneFlagNamePerIdeaWithTheFormerNamesKeptWorking(TestDatabase db) throws Exception {
        String schema = db.freshSchemaName("cli_flags");
        run(db, schema, "system", "register");
        assertThat(run(db, schema, "queue", "enqueue", "mail", "--data", "new").exit()).isZero();
        assertThat(run(db, schema, "queue", "enqueue", "mail", "--payload", "old").exit()).isZero();
        assertThat(run(db, schema, "queue", "enqueue", "mail", "--data", "a", "--payload", "b").exit()).isEqualTo(Main.USAGE);
        assertThat(scalar(db, "SELECT count(*) FROM " + schema + ".job WHERE queue = 'mail'")).isEqualTo(2);
        assertThat(CliTest.raw("queue", "enqueue", "--help").out()).contains("--data").doesNotContain("--payload");
        assertThat(CliTest.raw("schedule", "register", "--help").out()).contains("--data").doesNotContain("--payload");
        assertThat(CliTest.raw("consumer", "dead", "--help").out()).contains("--cursor").doesNotContain("--page");
        assertThat(CliTest.raw("queue", "dead", "--help").out()).contains("--cursor").doesNotContain("--page");
        assertThat(CliTest.raw("bench", "produce", "--help").out()).doesNotContain("--json").contains("--output");
        assertThat(CliTest.raw("stream", "read", "--help").out()).contains("--poll-interval");
        // Dead letters are named like dead jobs: ids as arguments (--id still works), or --all.
        run(db, schema, "stream", "register", "s");
        run(db, schema, "consumer", "register", "s", "g");
        expectCode(run(db, schema, "consumer", "redrive", "s", "g", "999999999"), "SLU-0109");
        expectCode(run(db, schema, "consumer", "redrive", "s", "g", "--id", "999999999"), "SLU-0109");
        assertThat(run(db, schema, "consumer", "redrive", "s", "g", "--all").out()).contains("redriven 0 dead letters");
        assertThat(run(db, schema, "consumer", "redrive", "s", "g", "1", "--all").exit()).isEqualTo(Main.USAGE);
        assertThat(run(db, schema, "consumer", "purge", "s", "g", "--yes").exit()).isEqualTo(Main.USAGE);
        assertThat(CliTest.raw("consumer", "redrive", "--help").out()).contains("MESSAGE_ID").doesNotContain("--id");
        run(db, schema, "stream", "register", "ticks");
        CliTest.Run reg = run(db, schema, "schedule", "register", "tick", "--every", "5m", "--stream", "ticks", "--payload", "x",
                "-o", "json");
        assertThat(reg.json().get("payload_bytes").asInt()).isEqualTo(1);
    }

    @Test
    void argumentsOutOfRangeAreCodedErrorsNotStackTraces(TestDatabase db, @TempDir Path dir) throws Exception {
        String schema = db.freshSchemaName("cli_ranges");
        run(db, schema, "system", "register");
        run(db, schema, "stream", "register", "s");
        expectCode(run(db, schema, "stream", "read", "s", "--follow", "--poll-interval", "PT-1S"), "SLU-0015");
        expectCode(run(db, schema, "stream", "read", "s", "--follow", "--poll", "-PT1S"), "SLU-0015");
        expectCode(run(db, schema, "stream", "read", "s", "--follow", "--poll-interval", "106751991167d"), "SLU-0015");
        expectCode(run(db, schema, "stream", "register", "t", "--retention", "PT-24H"), "SLU-0015");
        expectCode(run(db, schema, "consumer", "register", "s", "g", "--start", "99999999999999999999"), "SLU-0015");
        expectCode(run(db, schema, "consumer", "register", "s", "g", "--start", ""), "SLU-0015");
        expectCode(run(db, schema, "consumer", "register", "s", "g", "--start", "+1000000000-01-01T00:00:00Z"), "SLU-0015");
        assertThat(run(db, schema, "consumer", "list", "s", "-o", "json").json()).as("no group was created").isEmpty();
        for (String when : List.of("+1000000000-01-01T00:00:00Z", "+200000-01-01T00:00:00Z", "-1000000000-01-01T00:00:00Z")) {
            expectCode(run(db, schema, "queue", "enqueue", "q", "--data", "x", "--run-at", when), "SLU-0015");
            expectCode(run(db, schema, "queue", "enqueue", "q", "--data", "x", "--expires-at", when), "SLU-0015");
        }
        expectCode(run(db, schema, "queue", "enqueue", "q", "--data", "x", "--delay", "PT-5S"), "SLU-0015");
        expectCode(run(db, schema, "consumer", "rewind", "s", "g", "--to-time", "+1000000000-01-01T00:00:00Z"), "SLU-0015");

        CliTest.Run missing = run(db, schema, "stream", "produce", "s", "--file", dir.resolve("nope.bin").toString());
        expectCode(missing, "SLU-0015");
        assertThat(missing.err()).contains("does not exist");
        expectCode(run(db, schema, "stream", "produce", "s", "--file", dir.toString()), "SLU-0015");
        expectCode(run(db, schema, "queue", "enqueue", "q", "--file", dir.resolve("nope.bin").toString()), "SLU-0015");
        // An endless file is refused after the limit + 1 bytes, not read into memory.
        CliTest.Run endless = run(db, schema, "stream", "produce", "s", "--file", "/dev/zero");
        expectCode(endless, "SLU-0015");
        assertThat(endless.err()).contains("more than 1048576 bytes");
        expectCode(run(db, schema, "queue", "enqueue", "q", "--file", "/dev/zero"), "SLU-0015");
        Path exact = dir.resolve("exact.bin");
        Files.write(exact, new byte[1_048_576]);
        assertThat(run(db, schema, "stream", "produce", "s", "--file", exact.toString()).out().trim()).isEqualTo("1");
        assertThat(scalar(db, "SELECT count(*) FROM " + schema + ".job")).as("no job was written").isZero();
    }

    @Test
    void nothingPrintedCanDriveTheTerminal(TestDatabase db) throws Exception {
        String schema = db.freshSchemaName("cli_escapes");
        run(db, schema, "stream", "register", "s");
        // Keys and header names refuse control characters; the refusal does not print them raw either.
        for (String flag : List.of("--key", "--routing-key", "--idempotency-key")) {
            CliTest.Run refused = run(db, schema, "stream", "produce", "s", flag, "k" + TITLE, "--data", "x");
            expectCode(refused, "SLU-0005");
            assertThat(refused.out() + refused.err()).doesNotContain(ESC);
        }
        expectCode(run(db, schema, "stream", "produce", "s", "--header", "h" + CLEAR + "=v", "--data", "x"), "SLU-0006");
        // A header value may hold them; it is escaped on output, and JSON escapes it too.
        assertThat(run(db, schema, "stream", "produce", "s", "--key", "k1", "--header", "note=" + TITLE + "\u009b2J\u202e",
                "--data", "line one\nline two" + "\u202e").exit()).isZero();
        CliTest.Run text = run(db, schema, "stream", "read", "s");
        assertThat(text.out()).doesNotContain(ESC).doesNotContain("\u0007").doesNotContain("\u009b").doesNotContain("\u202e")
                .contains("headers={note=\\x1b]0;owned\\x07\\x9b2J\\u202e}").contains("line one\nline two\\u202e");
        CliTest.Run json = run(db, schema, "stream", "read", "s", "-o", "json");
        assertThat(json.out()).doesNotContain(ESC).doesNotContain("\u009b").doesNotContain("\u202e");
        JsonNode row = new ObjectMapper().readTree(json.out().lines().findFirst().orElseThrow());
        assertThat(row.at("/headers/note").asText()).isEqualTo(TITLE + "\u009b2J\u202e");

        // Text tables escape every cell: a last error written by a worker cannot clear the screen.
        run(db, schema, "queue", "enqueue", "q", "--data", "x");
        db.execute("UPDATE " + schema + ".job SET last_error = E'boom \\x1b[2J\\x1b]0;owned\\x07'");
        CliTest.Run table = run(db, schema, "queue", "jobs", "q");
        assertThat(table.out()).doesNotContain(ESC).contains("boom \\x1b[2J\\x1b]0;owned\\x07");
        CliTest.Run page = run(db, schema, "queue", "jobs", "q", "-o", "json");
        assertThat(page.json().at("/items/0/last_error").asText()).isEqualTo("boom " + CLEAR + TITLE);

        // Usage errors echo the argument escaped and cut.
        CliTest.Run usage = CliTest.raw("stream", "list", "--" + CLEAR + "x".repeat(5_000));
        assertThat(usage.exit()).isEqualTo(Main.USAGE);
        assertThat(usage.err()).doesNotContain(ESC).doesNotContain("x".repeat(Terminal.MAX_MESSAGE + 1));
        CliTest.Run destroy = run(db, schema, "stream", "destroy", "s" + CLEAR + "y".repeat(5_000));
        assertThat(destroy.exit()).isEqualTo(Main.USAGE);
        assertThat(destroy.err()).doesNotContain(ESC).doesNotContain("y".repeat(141));
    }

    /** A command that fails with an exception that is not coded (a bug), quoting a database URL. */
    @CommandLine.Command(name = "boom")
    static final class Boom implements Runnable {
        @Override
        public void run() {
            throw new IllegalStateException("driver said: cannot use jdbc:postgresql://h/db?password=" + TITLE + "pw%21");
        }
    }

    static CliTest.Run boom(String... args) {
        java.io.StringWriter out = new java.io.StringWriter();
        java.io.StringWriter err = new java.io.StringWriter();
        java.io.PrintWriter o = Terminal.escaping(new java.io.PrintWriter(out, true));
        java.io.PrintWriter e = Terminal.escaping(new java.io.PrintWriter(err, true));
        CommandLine cl = Main.commandLine(new Main(), o, e);
        cl.addSubcommand(new CommandLine(new Boom()));
        int exit = cl.execute(args);
        o.flush();
        e.flush();
        return new CliTest.Run(exit, out.toString(), err.toString());
    }

    @Test
    void anUncodedFailureIsOneScrubbedLineAndItsStackTraceOnlyWithDebug() {
        String url = "jdbc:postgresql://h/db?user=me&password=" + TITLE + "pw%21";
        CliTest.Run plain = boom("--database-url", url, "boom");
        assertThat(plain.exit()).isEqualTo(Main.FAILURE);
        assertThat(plain.err().lines()).hasSize(1);
        assertThat(plain.err()).startsWith("error: java.lang.IllegalStateException: driver said:").contains("--debug")
                .doesNotContain("owned").doesNotContain("pw!").doesNotContain("pw%21").doesNotContain("\tat ");
        CliTest.Run debug = boom("--database-url", url, "--debug", "boom");
        assertThat(debug.exit()).isEqualTo(Main.FAILURE);
        assertThat(debug.err()).contains("\tat dev.sluice.cli.HostileArgumentsCliTest$Boom.run").doesNotContain("owned")
                .doesNotContain("pw%21").doesNotContain(ESC);
    }

    @Test
    void echoedInputIsCutAtAFixedLength(TestDatabase db) {
        String huge = "x".repeat(10_000);
        CliTest.Run schema = run(db, huge, "stream", "list");
        expectCode(schema, "SLU-0002");
        assertThat(schema.err().length()).isLessThan(600);
        CliTest.Run json = run(db, huge + CLEAR, "stream", "list", "-o", "json");
        assertThat(json.json().at("/error/problem").asText()).hasSizeLessThan(300).doesNotContain(ESC);
        for (String[] args : List.of(new String[] {"stream", "get", huge}, new String[] {"explain", huge},
                new String[] {"queue", "jobs", "q", "--state", huge}, new String[] {"stream", "register", "s", "--retention", huge},
                new String[] {"queue", "enqueue", "q", "--run-at", huge}, new String[] {"consumer", "dead", "s", "g", "--cursor", huge},
                new String[] {"stream", "produce", "s", "--file", huge})) {
            CliTest.Run r = run(db, db.schema(), args);
            assertThat(r.exit()).as(String.join(" ", args).substring(0, 40)).isEqualTo(Main.FAILURE);
            assertThat(r.err()).as(String.join(" ", args).substring(0, 40)).doesNotContain("x".repeat(141));
        }
    }
}
