package dev.sluice.cli;

import dev.sluice.ErrorCode;
import dev.sluice.ProduceOptions;
import dev.sluice.Produced;
import dev.sluice.Producer;
import dev.sluice.ProducerConfig;
import dev.sluice.Serde;
import dev.sluice.SluiceException;
import dev.sluice.StreamInfo;
import dev.sluice.internal.jdbc.DatabaseUrls;
import dev.sluice.internal.produce.MessageEncoder;
import dev.sluice.internal.schedule.ScheduleStore;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * {@code sluice stream produce NAME --lines}: one message per line of standard input, through one
 * {@link Producer} whose batcher turns the many calls in flight into few transactions.
 *
 * <ul>
 *   <li>A line is the bytes up to {@code \n}; the terminator ({@code \n} or {@code \r\n}) is not part of the
 *       payload; a last line without a terminator counts. Empty lines are skipped (counted as
 *       {@code skipped_empty}), so a trailing blank line or a blank separator produces nothing.</li>
 *   <li>Every line must be UTF-8 text without control characters other than tab, and at most the stream's
 *       payload limit. The first line that is not stops the run: everything before it is produced (waited for),
 *       nothing from it on is, and the error names its line number (exit 1).</li>
 *   <li>Memory stays bounded: a line is read up to the limit plus two bytes and no further; at most
 *       {@link #WINDOW_MESSAGES} messages and {@link #WINDOW_BYTES} bytes are in flight (a single larger line goes
 *       alone). One transaction at a time, so ids follow line order.</li>
 * </ul>
 */
final class StreamProduceLines {
    /** Most produce calls in flight (accepted, outcome not yet known); below the producer's buffer bound. */
    static final int WINDOW_MESSAGES = 4096;
    /** Most payload bytes in flight; below the producer's buffer bound. */
    static final long WINDOW_BYTES = 16L << 20;
    /** Lines per transaction at most. */
    static final int BATCH = 1000;
    /** The content type of every message: lines are checked to be UTF-8 text. */
    static final String CONTENT_TYPE = "text/plain; charset=utf-8";

    private StreamProduceLines() {
    }

    /** What a run produced (so far); updated by the producer's completions, read once all are in. */
    static final class Tally {
        long lines;
        long skippedEmpty;
        long produced;
        long duplicates;
        long firstLine = Long.MAX_VALUE;
        Long firstId;
        long lastLine = -1;
        Long lastId;
        long failedLine = Long.MAX_VALUE;
        long failed;
        long producedAfterFailedLine;
        SluiceException failure;
        int inFlight;
        long inFlightBytes;
        // Line numbers of successes, kept only as a count past the first failure (set when all are in).
        private final java.util.List<Long> doneLines = new java.util.ArrayList<>();

        synchronized void succeeded(long line, Produced p) {
            if (p.duplicate()) {
                duplicates++;
            } else {
                produced++;
                if (line < firstLine) {
                    firstLine = line;
                    firstId = p.id();
                }
                if (line > lastLine) {
                    lastLine = line;
                    lastId = p.id();
                }
            }
            if (failure != null || failed > 0) {
                doneLines.add(line);
            }
        }

        synchronized void failed(long line, Throwable error) {
            failed++;
            if (line < failedLine) {
                failedLine = line;
                SluiceException e = sluiceError(error);
                failure = new SluiceException(e.code(), "line " + line + ": " + e.problem(), e);
            }
        }

        /** A failure before sending (the line itself): nothing from this line on is produced. */
        synchronized void refused(long line, SluiceException e) {
            if (line < failedLine) {
                failedLine = line;
                failure = e;
            }
        }

        synchronized boolean stopped() {
            return failure != null;
        }

        /** Waits for room in the window for a message of {@code bytes}, then takes it. */
        synchronized void enter(long bytes) throws InterruptedException {
            while (inFlight >= WINDOW_MESSAGES || (inFlight > 0 && inFlightBytes + bytes > WINDOW_BYTES)) {
                wait();
            }
            inFlight++;
            inFlightBytes += bytes;
        }

        synchronized void leave(long bytes) {
            inFlight--;
            inFlightBytes -= bytes;
            notifyAll();
        }

        /** Waits until every message sent has its outcome. */
        synchronized void awaitAll() throws InterruptedException {
            while (inFlight > 0) {
                wait();
            }
            if (failure != null) {
                for (long line : doneLines) {
                    if (line > failedLine) {
                        producedAfterFailedLine++;
                    }
                }
            }
        }
    }

    /** The coded error behind a future's failure. */
    static SluiceException sluiceError(Throwable error) {
        Throwable t = error instanceof java.util.concurrent.CompletionException && error.getCause() != null ? error.getCause() : error;
        return t instanceof SluiceException se ? se
                : new SluiceException(ErrorCode.DATABASE_ERROR, "unexpected failure: " + t.getClass().getName(), t);
    }

    /** Reads {@code in} line by line and produces each line to stream {@code name}; returns the exit code. */
    static int run(Base cmd, CliContext ctx, String name, ProduceOptions options, String idempotencyPrefix, InputStream in)
            throws InterruptedException {
        StreamInfo info = ctx.sluice().stream(name).get().orElseThrow(() -> new SluiceException(
                ErrorCode.STREAM_NOT_FOUND, "stream '" + name + "' does not exist"));
        int limit = info.config().maxPayloadBytes();
        // Keys and headers are the same on every line: checked once, before a byte of input is read (the longest
        // idempotency key the prefix can make included).
        new MessageEncoder<>(TEXT, byte[].class).encode(new byte[0], idempotencyPrefix == null ? options
                : options.toBuilder().idempotencyKey(idempotencyPrefix + ":" + Long.MAX_VALUE).build(), limit);
        ProducerConfig config = ProducerConfig.defaults().withMaxInFlight(1).withMaxBatchSize(BATCH).withSerde(TEXT);
        Tally tally = new Tally();
        LineReader reader = new LineReader(in);
        try (Producer<byte[]> producer = ctx.sluice().stream(name).producer(config)) {
            while (!tally.stopped()) {
                byte[] line;
                try {
                    line = reader.next(limit);
                    if (line == null) {
                        break;
                    }
                    tally.lines = reader.number();
                    if (line.length == 0) {
                        tally.skippedEmpty++;
                        continue;
                    }
                    checkText(line, reader.number());
                } catch (SluiceException e) {
                    tally.lines = reader.number();
                    tally.refused(reader.number(), e);
                    break;
                }
                long number = reader.number();
                ProduceOptions o = idempotencyPrefix == null ? options
                        : options.toBuilder().idempotencyKey(idempotencyPrefix + ":" + number).build();
                long bytes = line.length;
                tally.enter(bytes);
                CompletableFuture<Produced> f = producer.produceAsync(line, o);
                if (f.isCompletedExceptionally()) {
                    // Refused before it was sent (a key or header the encoder rejects): nothing of it is stored.
                    tally.leave(bytes);
                    SluiceException e = sluiceError(f.handle((p, error) -> error).join());
                    tally.refused(number, new SluiceException(e.code(), "line " + number + ": " + e.problem(), e));
                    break;
                }
                f.whenComplete((p, error) -> {
                    if (error == null) {
                        tally.succeeded(number, p);
                    } else {
                        tally.failed(number, error);
                    }
                    tally.leave(bytes);
                });
            }
            tally.awaitAll();
        }
        report(cmd, tally);
        return tally.failure == null ? Main.OK : Main.FAILURE;
    }

    private static void report(Base cmd, Tally t) {
        PrintWriter out = cmd.out();
        if (cmd.json()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("produced", t.produced);
            m.put("first_id", t.firstId);
            m.put("last_id", t.lastId);
            m.put("duplicates", t.duplicates);
            m.put("skipped_empty", t.skippedEmpty);
            m.put("lines", t.lines);
            if (t.failure != null) {
                m.put("failed_line", t.failedLine);
                m.put("failed", t.failed);
                m.put("produced_after_failed_line", t.producedAfterFailedLine);
                Map<String, Object> e = new LinkedHashMap<>();
                e.put("code", t.failure.code().code());
                e.put("name", t.failure.code().name());
                e.put("problem", DatabaseUrls.scrub(problem(t), cmd.globals().rawDatabaseUrl()));
                e.put("retryable", t.failure.retryable());
                e.put("fix", t.failure.fix());
                m.put("error", e);
            }
            Output.json(out, m);
            return;
        }
        StringBuilder line = new StringBuilder("produced ").append(t.produced).append(t.produced == 1 ? " message" : " messages");
        if (t.firstId != null) {
            line.append(", first id ").append(t.firstId).append(", last id ").append(t.lastId);
        }
        if (t.duplicates > 0) {
            line.append(", ").append(t.duplicates).append(t.duplicates == 1 ? " duplicate" : " duplicates")
                    .append(" (already stored under their idempotency keys)");
        }
        if (t.skippedEmpty > 0) {
            line.append(", skipped ").append(t.skippedEmpty).append(t.skippedEmpty == 1 ? " empty line" : " empty lines");
        }
        out.println(line);
        if (t.failure != null) {
            PrintWriter err = cmd.spec.commandLine().getErr();
            err.println("error: " + Terminal.escape(DatabaseUrls.scrub(problem(t), cmd.globals().rawDatabaseUrl()))
                    + " [" + t.failure.code().code() + "]");
            err.println("  fix: " + t.failure.fix());
        }
    }

    /** The failure's problem, with what was and was not stored. */
    private static String problem(Tally t) {
        String stored;
        if (t.failed == 0) {
            stored = "the lines before it were produced, nothing from it on";
        } else {
            stored = t.failed + (t.failed == 1 ? " line" : " lines") + " of its batch failed with it; the lines before it were produced";
            if (t.producedAfterFailedLine > 0) {
                stored += ", and so were " + t.producedAfterFailedLine + " lines after it that had already been sent";
            }
        }
        return t.failure.problem() + " (" + stored + "; rerunning with --idempotency-prefix stores no line twice)";
    }

    /** INVALID_ARGUMENT unless {@code line} is UTF-8 without control characters other than tab. */
    static void checkText(byte[] line, long number) {
        CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        ByteBuffer bytes = ByteBuffer.wrap(line);
        CharBuffer chars = CharBuffer.allocate(line.length);
        CoderResult r = decoder.decode(bytes, chars, true);
        if (!r.isError()) {
            r = decoder.flush(chars);
        }
        if (r.isError()) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "line " + number + " is not valid UTF-8 (byte "
                    + (bytes.position() + 1) + "); --lines takes text, one message per line (use --file for binary payloads)");
        }
        chars.flip();
        for (int i = 0; i < chars.limit(); i++) {
            char ch = chars.get(i);
            if (ch != '\t' && (Character.isISOControl(ch))) {
                throw new SluiceException(ErrorCode.INVALID_ARGUMENT, String.format("line %d holds the control character "
                        + "U+%04X (character %d); --lines takes text without control characters other than tab "
                        + "(use --file for binary payloads)", number, (int) ch, i + 1));
            }
        }
    }

    /** Bytes stored as given, labelled as UTF-8 text (every line was checked to be). */
    private static final Serde<byte[]> TEXT = ScheduleStore.bytesAs(CONTENT_TYPE);

    /**
     * Lines of a byte stream, each read no further than the limit: a line longer than it is refused with
     * PAYLOAD_TOO_LARGE after at most limit + 2 of its bytes (a {@code \r} before the {@code \n} is allowed).
     */
    static final class LineReader {
        private final InputStream in;
        private final byte[] buf = new byte[64 * 1024];
        private int pos;
        private int end;
        private boolean eof;
        private long number;
        private byte[] acc = new byte[256];
        private int len;

        LineReader(InputStream in) {
            this.in = in;
        }

        /** The number of the line {@link #next} returned last (1-based). */
        long number() {
            return number;
        }

        /** The next line without its terminator, or null at the end of the input. */
        byte[] next(int limit) {
            len = 0;
            boolean any = false;
            while (true) {
                if (pos == end) {
                    if (eof || !fill()) {
                        if (!any) {
                            return null;
                        }
                        number++;
                        return finish(limit);
                    }
                }
                any = true;
                int nl = -1;
                for (int i = pos; i < end; i++) {
                    if (buf[i] == '\n') {
                        nl = i;
                        break;
                    }
                }
                int stop = nl < 0 ? end : nl;
                append(pos, stop - pos, limit);
                pos = nl < 0 ? end : nl + 1;
                if (nl >= 0) {
                    number++;
                    return finish(limit);
                }
            }
        }

        private byte[] finish(int limit) {
            int n = len > 0 && acc[len - 1] == '\r' ? len - 1 : len;
            if (n > limit) {
                throw tooLong(number, limit);
            }
            return Arrays.copyOf(acc, n);
        }

        private void append(int from, int count, int limit) {
            if ((long) len + count > (long) limit + 1) {
                throw tooLong(number + 1, limit);
            }
            if (len + count > acc.length) {
                acc = Arrays.copyOf(acc, Math.max(len + count, Math.min(limit + 1, acc.length * 2)));
            }
            System.arraycopy(buf, from, acc, len, count);
            len += count;
        }

        private boolean fill() {
            try {
                int n = in.read(buf);
                if (n < 0) {
                    eof = true;
                    return false;
                }
                pos = 0;
                end = n;
                return true;
            } catch (IOException e) {
                throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "standard input cannot be read after line " + number
                        + " (" + e.getClass().getSimpleName() + ")");
            }
        }

        private SluiceException tooLong(long line, int limit) {
            number = line;
            return new SluiceException(ErrorCode.PAYLOAD_TOO_LARGE, "line " + line + " is longer than " + limit
                    + " bytes, the stream's payload limit (stopped reading there)");
        }
    }
}
