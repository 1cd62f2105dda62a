package dev.sluice.cli;

import dev.sluice.ErrorCode;
import dev.sluice.ProduceOptions;
import dev.sluice.Produced;
import dev.sluice.Producer;
import dev.sluice.SluiceException;
import dev.sluice.Stream;
import dev.sluice.StreamConfig;
import dev.sluice.StoredMessage;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code sluice stream produce} and {@code sluice stream read}. */
final class StreamIo {
    private StreamIo() {
    }

    @Command(name = "produce", description = {"Produce one message and print its id (and whether it was a duplicate).",
            "With --lines, produce one message per line of standard input (UTF-8 text; the line terminator is not part "
                    + "of the payload; empty lines are skipped) with the same --key, --routing-key and --header on every "
                    + "line, batched into few transactions, and print 'produced N messages, first id A, last id B' "
                    + "(-o json: {\"produced\":N,\"first_id\":A,\"last_id\":B,...}). The first line that is longer than "
                    + "the stream's payload limit, not UTF-8, or holds a control character other than tab stops the "
                    + "run: the lines before it are produced, nothing from it on, and the error names its line number "
                    + "(exit 1)."})
    static final class Produce extends Base {
        @Parameters(paramLabel = "NAME", description = "Stream name.")
        String name;

        @Option(names = "--key", paramLabel = "K", description = "Message key (ordering and compaction identity).")
        String key;

        @Option(names = "--routing-key", paramLabel = "R", description = "Routing key (matched by group bindings).")
        String routingKey;

        @Option(names = "--idempotency-key", paramLabel = "I", description = "Deduplicate: a repeat returns the original id "
                + "(not with --lines: see --idempotency-prefix).")
        String idempotencyKey;

        @Option(names = "--idempotency-prefix", paramLabel = "P", description = "With --lines: line N gets the idempotency "
                + "key P:N, so running the same input again with the same P stores no line twice (repeats are counted as "
                + "duplicates).")
        String idempotencyPrefix;

        @Option(names = "--header", paramLabel = "k=v", description = "A header (repeatable).")
        Map<String, String> headers = new LinkedHashMap<>();

        @ArgGroup(exclusive = true, multiplicity = "1")
        Source source;

        static final class Source {
            @Option(names = "--data", paramLabel = "TEXT", description = "The payload as text (UTF-8).")
            String data;

            @Option(names = "--file", paramLabel = "PATH", description = "Read the payload from a file (bytes as they are).")
            Path file;

            @Option(names = "-", description = "Read the payload from standard input.")
            boolean stdin;

            @Option(names = "--lines", description = "One message per line of standard input (see above); bounded memory "
                    + "whatever the input size.")
            boolean lines;
        }

        @Override
        public Integer call() throws InterruptedException {
            if (source.lines) {
                if (idempotencyKey != null) {
                    throw new Main.UsageException("--idempotency-key would make every line after the first a duplicate; "
                            + "with --lines use --idempotency-prefix P (line N gets the key P:N)");
                }
                ProduceOptions options = ProduceOptions.builder().messageKey(key).routingKey(routingKey).headers(headers).build();
                try (CliContext ctx = open()) {
                    return StreamProduceLines.run(this, ctx, name, options, idempotencyPrefix, System.in);
                }
            }
            if (idempotencyPrefix != null) {
                throw new Main.UsageException("--idempotency-prefix goes with --lines; for one message use --idempotency-key");
            }
            ProduceOptions options = ProduceOptions.builder().messageKey(key).routingKey(routingKey)
                    .idempotencyKey(idempotencyKey).headers(headers).build();
            // A file is opened before the database is, so a missing one fails fast.
            try (PayloadInput input = PayloadInput.open(source.file, source.stdin);
                 CliContext ctx = open(); Producer<byte[]> p = ctx.sluice().stream(name).producer()) {
                byte[] payload;
                if (input == null) {
                    payload = source.data.getBytes(StandardCharsets.UTF_8);
                } else {
                    // Read no more than the stream accepts (an unknown stream is reported by produce).
                    int limit = ctx.sluice().stream(name).get().map(s -> s.config().maxPayloadBytes())
                            .orElse(StreamConfig.defaults().maxPayloadBytes());
                    payload = input.read(limit);
                }
                Produced r = p.produce(payload, options);
                if (json()) {
                    Output.json(out(), Map.of("id", r.id(), "duplicate", r.duplicate()));
                } else {
                    out().println(r.id() + (r.duplicate() ? " duplicate" : ""));
                }
            }
            return Main.OK;
        }
    }

    @Command(name = "read", description = {"Print messages in id order (never past the snapshot fence).",
            "Payloads print as text when they are UTF-8, else as base64."})
    static final class Read extends Base {
        @Parameters(paramLabel = "NAME", description = "Stream name.")
        String name;

        @Option(names = "--from", paramLabel = "ID", defaultValue = "1", description = "First id to print (default: ${DEFAULT-VALUE}).")
        long from;

        @Option(names = "--limit", paramLabel = "N", defaultValue = "100",
                description = "Most messages to print (default: ${DEFAULT-VALUE}); with --follow, stop after N.")
        int limit;

        @Option(names = "--follow", description = "Keep waiting for new messages (Ctrl-C stops).")
        boolean follow;

        @Option(names = "--max-bytes", paramLabel = "BYTES", defaultValue = "16777216",
                description = "Byte budget of one fetch from the database (default: ${DEFAULT-VALUE}, 16 MiB): payloads "
                        + "are fetched in batches within it (a larger single message alone), so memory stays bounded.")
        long maxBytes;

        // No picocli default: it would be applied after the --poll alias set the field, undoing it.
        @Option(names = "--poll-interval", paramLabel = "DURATION",
                description = "With --follow, how often to look for new messages (default: 200ms).")
        String poll;

        /** The former name of --poll-interval, kept working. */
        @Option(names = "--poll", paramLabel = "DURATION", hidden = true)
        void legacyPoll(String value) {
            poll = value;
        }

        @Override
        public Integer call() throws InterruptedException {
            if (limit < 1) {
                throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "--limit must be at least 1");
            }
            if (maxBytes < 1) {
                throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "--max-bytes must be at least 1");
            }
            dev.sluice.ReadOptions readOptions = dev.sluice.ReadOptions.defaults().withMaxBytes(maxBytes);
            Duration pollEvery = Durations.parse(poll == null ? "200ms" : poll);
            try (CliContext ctx = open()) {
                Stream<byte[]> stream = ctx.sluice().stream(name);
                long after = from - 1;
                int printed = 0;
                while (true) {
                    List<StoredMessage> batch = stream.read(after, Math.min(1000, limit - printed), readOptions);
                    for (StoredMessage m : batch) {
                        print(out(), m, json());
                        after = m.id();
                        printed++;
                    }
                    out().flush();
                    if (printed >= limit) {
                        return Main.OK;
                    }
                    if (batch.isEmpty()) {
                        if (!follow) {
                            return Main.OK;
                        }
                        Thread.sleep(pollEvery.toMillis());
                    }
                }
            }
        }
    }

    static void print(PrintWriter out, StoredMessage m, boolean json) {
        String text = utf8(m.payload());
        if (json) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("id", m.id());
            row.put("created_at", m.createdAt().toString());
            row.put("message_key", m.messageKey());
            row.put("routing_key", m.routingKey());
            row.put("headers", m.headers());
            row.put("content_type", m.contentType());
            row.put("schema_version", m.schemaVersion());
            if (m.compactionRank() != null) {
                row.put("compaction_rank", m.compactionRank());
            }
            if (m.deliverAt() != null) {
                row.put("deliver_at", m.deliverAt().toString());
            }
            if (text != null) {
                row.put("payload", text);
            } else {
                row.put("payload_base64", Base64.getEncoder().encodeToString(m.payload()));
            }
            Output.jsonLine(out, row);
            return;
        }
        // Keys and headers were written by anyone: escaped, so they cannot drive the reader's terminal.
        StringBuilder line = new StringBuilder().append(m.id());
        if (m.messageKey() != null) {
            line.append(" key=").append(Terminal.escape(m.messageKey()));
        }
        if (m.routingKey() != null) {
            line.append(" routing=").append(Terminal.escape(m.routingKey()));
        }
        if (!m.headers().isEmpty()) {
            line.append(" headers=").append(Terminal.escape(m.headers().toString()));
        }
        line.append(' ').append(text != null ? Terminal.escape(text, true) : "base64:" + Base64.getEncoder().encodeToString(m.payload()));
        out.println(line);
    }

    /** The payload as text when it is valid UTF-8 without control characters other than whitespace, else null. */
    static String utf8(byte[] bytes) {
        try {
            String s = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
            for (int i = 0; i < s.length(); i++) {
                char ch = s.charAt(i);
                if (Character.isISOControl(ch) && ch != '\n' && ch != '\t' && ch != '\r') {
                    return null;
                }
            }
            return s;
        } catch (CharacterCodingException e) {
            return null;
        }
    }
}
