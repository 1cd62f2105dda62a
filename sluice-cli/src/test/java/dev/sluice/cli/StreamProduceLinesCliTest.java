package dev.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code sluice stream produce NAME --lines}, against the embedded PostgreSQL. */
@SluiceTest
class StreamProduceLinesCliTest {

    /** Runs the CLI with {@code stdin} as standard input. */
    static CliTest.Run withInput(InputStream stdin, TestDatabase db, String schema, String... args) {
        InputStream saved = System.in;
        System.setIn(stdin);
        try {
            return CliTest.run(db, schema, args);
        } finally {
            System.setIn(saved);
        }
    }

    static CliTest.Run withInput(String stdin, TestDatabase db, String schema, String... args) {
        return withInput(new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)), db, schema, args);
    }

    static CliTest.Run withInput(byte[] stdin, TestDatabase db, String schema, String... args) {
        return withInput(new ByteArrayInputStream(stdin), db, schema, args);
    }

    static long streamId(TestDatabase db, String schema, String stream) {
        return CliTest.run(db, schema, "stream", "get", stream, "-o", "json").json().get("id").asLong();
    }

    static long[] query(TestDatabase db, String sql) throws Exception {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            long[] row = new long[rs.getMetaData().getColumnCount()];
            for (int i = 0; i < row.length; i++) {
                row[i] = rs.getLong(i + 1);
            }
            return row;
        }
    }

    static String text(TestDatabase db, String sql) throws Exception {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }

    @Test
    void tenThousandLinesInFewTransactionsWithTheFlagsOnEveryLine(TestDatabase db) throws Exception {
        String schema = db.freshSchemaName("cli_lines");
        CliTest.run(db, schema, "stream", "register", "bulk");
        StringBuilder in = new StringBuilder();
        for (int i = 1; i <= 10_000; i++) {
            in.append("line ").append(i).append('\n');
        }
        CliTest.Run r = withInput(in.toString(), db, schema, "stream", "produce", "bulk", "--lines", "--key", "k-1",
                "--routing-key", "eu.bulk", "--header", "source=import");
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out().trim()).isEqualTo("produced 10000 messages, first id 1, last id 10000");

        long id = streamId(db, schema, "bulk");
        String log = "\"" + schema + "\".message_log_" + id;
        long[] stats = query(db, "SELECT count(*), min(id), max(id), count(DISTINCT xmin::text) FROM " + log);
        assertThat(stats[0]).isEqualTo(10_000);
        assertThat(stats[1]).isEqualTo(1);
        assertThat(stats[2]).isEqualTo(10_000);
        assertThat(stats[3]).as("transactions: batched, not one per line").isLessThanOrEqualTo(1_000);
        // One transaction at a time: ids follow line order.
        assertThat(query(db, "SELECT count(*) FROM " + log + " WHERE convert_from(payload, 'UTF8') <> 'line ' || id")[0]).isZero();
        assertThat(query(db, "SELECT count(*) FROM " + log + " WHERE message_key = 'k-1' AND routing_key = 'eu.bulk'"
                + " AND headers->>'source' = 'import' AND content_type = 'text/plain; charset=utf-8'")[0]).isEqualTo(10_000);
    }

    @Test
    void jsonSummaryTerminatorsAndEmptyLines(TestDatabase db) throws Exception {
        String schema = db.freshSchemaName("cli_lines_json");
        CliTest.run(db, schema, "stream", "register", "s");
        CliTest.Run r = withInput("a\r\n\nb\t tab\n\n\nlast without newline", db, schema, "stream", "produce", "s", "--lines", "-o", "json");
        assertThat(r.exit()).as(r.err()).isZero();
        JsonNode j = r.json();
        assertThat(j.get("produced").asLong()).isEqualTo(3);
        assertThat(j.get("first_id").asLong()).isEqualTo(1);
        assertThat(j.get("last_id").asLong()).isEqualTo(3);
        assertThat(j.get("duplicates").asLong()).isZero();
        assertThat(j.get("skipped_empty").asLong()).isEqualTo(3);
        assertThat(j.get("lines").asLong()).isEqualTo(6);
        assertThat(j.has("error")).isFalse();
        CliTest.Run read = CliTest.run(db, schema, "stream", "read", "s");
        assertThat(read.out().lines().toList()).containsExactly("1 a", "2 b\t tab", "3 last without newline");
    }

    @Test
    void emptyInputProducesNothing(TestDatabase db) {
        String schema = db.freshSchemaName("cli_lines_empty");
        CliTest.run(db, schema, "stream", "register", "s");
        CliTest.Run text = withInput("", db, schema, "stream", "produce", "s", "--lines");
        assertThat(text.exit()).as(text.err()).isZero();
        assertThat(text.out().trim()).isEqualTo("produced 0 messages");
        CliTest.Run json = withInput("", db, schema, "stream", "produce", "s", "--lines", "-o", "json");
        assertThat(json.exit()).isZero();
        assertThat(json.json().get("produced").asLong()).isZero();
        assertThat(json.json().get("first_id").isNull()).isTrue();
        assertThat(json.json().get("last_id").isNull()).isTrue();
        CliTest.Run blanks = withInput("\n\r\n\n", db, schema, "stream", "produce", "s", "--lines");
        assertThat(blanks.out().trim()).isEqualTo("produced 0 messages, skipped 3 empty lines");
    }

    @Test
    void aLineOverThePayloadLimitStopsTheRunThereAndNamesIt(TestDatabase db) throws Exception {
        String schema = db.freshSchemaName("cli_lines_long");
        CliTest.run(db, schema, "stream", "register", "small", "--max-payload-bytes", "8");
        // Exactly the limit (with a \r\n terminator) passes; line 3 is one byte over.
        CliTest.Run r = withInput("12345678\r\nok\n123456789\nnever\n", db, schema, "stream", "produce", "small", "--lines");
        assertThat(r.exit()).isEqualTo(Main.FAILURE);
        assertThat(r.out().trim()).isEqualTo("produced 2 messages, first id 1, last id 2");
        assertThat(r.err()).contains("line 3 is longer than 8 bytes").contains("[SLU-0004]")
                .contains("the lines before it were produced, nothing from it on");
        long id = streamId(db, schema, "small");
        assertThat(query(db, "SELECT count(*) FROM \"" + schema + "\".message_log_" + id)[0]).isEqualTo(2);

        CliTest.Run json = withInput("x\n123456789\n", db, schema, "stream", "produce", "small", "--lines", "-o", "json");
        assertThat(json.exit()).isEqualTo(Main.FAILURE);
        JsonNode j = json.json();
        assertThat(j.get("produced").asLong()).isEqualTo(1);
        assertThat(j.get("first_id").asLong()).isEqualTo(3);
        assertThat(j.get("failed_line").asLong()).isEqualTo(2);
        assertThat(j.at("/error/code").asText()).isEqualTo("SLU-0004");
        assertThat(j.at("/error/retryable").asBoolean()).isFalse();
    }

    @Test
    void endlessInputWithoutANewlineIsRefusedAfterTheLimit(TestDatabase db) {
        String schema = db.freshSchemaName("cli_lines_endless");
        CliTest.run(db, schema, "stream", "register", "s", "--max-payload-bytes", "1000");
        AtomicLong served = new AtomicLong();
        InputStream endless = new InputStream() {
            @Override
            public int read() {
                served.incrementAndGet();
                return 'a';
            }

            @Override
            public int read(byte[] b, int off, int len) {
                java.util.Arrays.fill(b, off, off + len, (byte) 'a');
                served.addAndGet(len);
                return len;
            }
        };
        CliTest.Run r = withInput(endless, db, schema, "stream", "produce", "s", "--lines");
        assertThat(r.exit()).isEqualTo(Main.FAILURE);
        assertThat(r.err()).contains("line 1 is longer than 1000 bytes").contains("SLU-0004");
        assertThat(served.get()).as("read no further than one buffer past the limit").isLessThanOrEqualTo(1000 + 64 * 1024);
    }

    @Test
    void hostileLinesAreCodedWithTheirLineNumber(TestDatabase db) throws Exception {
        String schema = db.freshSchemaName("cli_lines_hostile");
        CliTest.run(db, schema, "stream", "register", "s");
        long id = streamId(db, schema, "s");
        byte[] badUtf8 = {'o', 'k', '\n', 'b', (byte) 0xc3, '(', '\n', 'n', 'o', '\n'};
        CliTest.Run utf8 = withInput(badUtf8, db, schema, "stream", "produce", "s", "--lines");
        assertThat(utf8.exit()).isEqualTo(Main.FAILURE);
        assertThat(utf8.err()).contains("line 2 is not valid UTF-8 (byte 2)").contains("SLU-0015");
        assertThat(utf8.out().trim()).isEqualTo("produced 1 message, first id 1, last id 1");

        CliTest.Run nul = withInput("a\u0000b\n", db, schema, "stream", "produce", "s", "--lines");
        assertThat(nul.exit()).isEqualTo(Main.FAILURE);
        assertThat(nul.err()).contains("line 1 holds the control character U+0000 (character 2)").contains("SLU-0015");
        CliTest.Run esc = withInput("fine\nalso fine\n\u001b]0;owned\u0007\n", db, schema, "stream", "produce", "s", "--lines");
        assertThat(esc.err()).contains("line 3 holds the control character U+001B");
        CliTest.Run lone = withInput("a\rb\n", db, schema, "stream", "produce", "s", "--lines");
        assertThat(lone.err()).as("a \\r inside a line is a control character").contains("U+000D");
        CliTest.Run c1 = withInput("x\u0085y\n", db, schema, "stream", "produce", "s", "--lines");
        assertThat(c1.err()).contains("U+0085");
        // 1 from the UTF-8 run, 2 from the escape run; nothing from a refused line.
        assertThat(query(db, "SELECT count(*) FROM \"" + schema + "\".message_log_" + id)[0]).isEqualTo(3);
        assertThat(text(db, "SELECT string_agg(convert_from(payload, 'UTF8'), '|' ORDER BY id) FROM \"" + schema
                + "\".message_log_" + id)).isEqualTo("ok|fine|also fine");

        // Keys are checked before any input is read: a bad one fails even on empty input.
        CliTest.Run key = withInput("", db, schema, "stream", "produce", "s", "--lines", "--key", "");
        assertThat(key.exit()).isEqualTo(Main.FAILURE);
        assertThat(key.err()).contains("SLU-0005");
        CliTest.Run missing = withInput("a\n", db, schema, "stream", "produce", "nope", "--lines");
        assertThat(missing.exit()).isEqualTo(Main.FAILURE);
        assertThat(missing.err()).contains("SLU-0100");
    }

    @Test
    void idempotencyPrefixMakesARerunStoreNothingTwice(TestDatabase db) throws Exception {
        String schema = db.freshSchemaName("cli_lines_idem");
        CliTest.run(db, schema, "stream", "register", "s", "--max-payload-bytes", "8");
        CliTest.Run failed = withInput("a\nb\ntoo long line\nd\n", db, schema, "stream", "produce", "s", "--lines",
                "--idempotency-prefix", "load-7");
        assertThat(failed.exit()).isEqualTo(Main.FAILURE);
        // The operator fixes line 3 and runs the whole input again.
        CliTest.Run again = withInput("a\nb\nc\nd\n", db, schema, "stream", "produce", "s", "--lines",
                "--idempotency-prefix", "load-7", "-o", "json");
        assertThat(again.exit()).as(again.err()).isZero();
        assertThat(again.json().get("produced").asLong()).isEqualTo(2);
        assertThat(again.json().get("duplicates").asLong()).isEqualTo(2);
        long id = streamId(db, schema, "s");
        assertThat(text(db, "SELECT string_agg(convert_from(payload, 'UTF8'), '' ORDER BY id) FROM \"" + schema
                + "\".message_log_" + id)).isEqualTo("abcd");
    }

    @Test
    void usageErrorsAndHelp(TestDatabase db, @TempDir Path dir) throws Exception {
        String schema = db.freshSchemaName("cli_lines_usage");
        CliTest.run(db, schema, "stream", "register", "s");
        Path file = dir.resolve("p.txt");
        Files.writeString(file, "x");
        assertThat(withInput("a\n", db, schema, "stream", "produce", "s", "--lines", "--data", "x").exit()).isEqualTo(Main.USAGE);
        assertThat(withInput("a\n", db, schema, "stream", "produce", "s", "--lines", "--file", file.toString()).exit())
                .isEqualTo(Main.USAGE);
        assertThat(withInput("a\n", db, schema, "stream", "produce", "s", "--lines", "-").exit()).isEqualTo(Main.USAGE);
        CliTest.Run key = withInput("a\n", db, schema, "stream", "produce", "s", "--lines", "--idempotency-key", "k");
        assertThat(key.exit()).isEqualTo(Main.USAGE);
        assertThat(key.err()).contains("--idempotency-prefix");
        assertThat(CliTest.run(db, schema, "stream", "produce", "s", "--data", "x", "--idempotency-prefix", "p").exit())
                .isEqualTo(Main.USAGE);
        long id = streamId(db, schema, "s");
        assertThat(query(db, "SELECT count(*) FROM \"" + schema + "\".message_log_" + id)[0]).as("nothing written").isZero();
        CliTest.Run help = CliTest.raw("stream", "produce", "--help");
        assertThat(help.exit()).isZero();
        assertThat(help.out()).contains("--lines").contains("produced N messages, first id A, last id B")
                .contains("--idempotency-prefix");
    }
}
