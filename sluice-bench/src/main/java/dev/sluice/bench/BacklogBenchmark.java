package dev.sluice.bench;

import dev.sluice.ConsumeOptions;
import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.GroupConfig;
import dev.sluice.Outcome;
import dev.sluice.StartPosition;
import dev.sluice.Stream;
import dev.sluice.StreamConfig;
import dev.sluice.StreamInfo;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The {@code backlog} benchmark: does claiming get slower when a big backlog waits in the log? Stream
 * A holds N messages (default 1,000,000), written by plain SQL ({@code INSERT ... SELECT ... FROM
 * generate_series}, in chunks) for speed; stream B holds only the small working set of K messages
 * (default 200), written the same way. A fresh group at the beginning of each stream then claims and
 * delivers K messages in batches of {@code batch} (default 100) to a no-op handler, and the time from
 * {@code consume()} returning to the K-th handler's return is recorded. Each stream is measured
 * {@code repeats} times (default 10, interleaved, after one warm-up each); the medians are compared:
 * ratio = A ÷ B (target ≤ 1.5).
 *
 * <p>A third figure, {@code history_claim_ms}: K more messages appended to A after the backlog and a
 * group that starts right after the backlog, so the N messages lie behind its cursor (consumed history).
 *
 * <p>Both streams use the default partition size (1,000,000 ids); the benchmark creates the
 * {@code message_log} partitions the bulk insert needs with the names Sluice gives them, as a
 * producer's partition keeper would.
 */
public final class BacklogBenchmark {
    /** The scenario name in results. */
    public static final String SCENARIO = "backlog";
    /** The unit of {@code ours} and {@code reference}. */
    public static final String UNIT = "ms";
    /** The name of the reference: the same claims on a stream holding only the working set. */
    public static final String REFERENCE = "empty stream";
    /** Rows per bulk-insert transaction while filling the backlog. */
    private static final int FILL_CHUNK = 50_000;

    /**
     * What to run.
     *
     * @param databaseUrl  JDBC URL of the server to measure; {@code null} starts a temporary embedded one
     * @param size         messages in the backlog of stream A (default 1,000,000)
     * @param messages     the working set K claimed and delivered per measurement (default 200)
     * @param batch        {@code ConsumeOptions.batchSize} (default 100)
     * @param repeats      measurements per stream, medians reported (default 10)
     * @param payloadBytes payload size of every message (default 1024)
     */
    public record Options(String databaseUrl, long size, int messages, int batch, int repeats, int payloadBytes) {
        public Options {
            if (size < 1 || size > 1_000_000_000L) {
                throw new IllegalArgumentException("size must be between 1 and 1000000000 (got " + size + ")");
            }
            if (messages < 1 || messages > 100_000) {
                throw new IllegalArgumentException("messages must be between 1 and 100000 (got " + messages + ")");
            }
            if (messages > size) {
                throw new IllegalArgumentException("messages (" + messages + ") must not exceed the backlog size (" + size + ")");
            }
            if (batch < 1 || batch > 10_000) {
                throw new IllegalArgumentException("batch must be between 1 and 10000 (got " + batch + ")");
            }
            if (repeats < 1 || repeats > 1000) {
                throw new IllegalArgumentException("repeats must be between 1 and 1000 (got " + repeats + ")");
            }
            if (payloadBytes < 1 || payloadBytes > StreamConfig.DEFAULT_MAX_PAYLOAD_BYTES) {
                throw new IllegalArgumentException("payload bytes must be between 1 and "
                        + StreamConfig.DEFAULT_MAX_PAYLOAD_BYTES + " (got " + payloadBytes + ")");
            }
            if (databaseUrl != null && databaseUrl.isBlank()) {
                databaseUrl = null;
            }
        }

        /** The defaults: embedded server, 1,000,000 messages of 1 KB, K = 200 in batches of 100, 10 repeats. */
        public static Options defaults() {
            return new Options(null, 1_000_000, 200, 100, 10, 1024);
        }

        public Options withDatabaseUrl(String url) {
            return new Options(url, size, messages, batch, repeats, payloadBytes);
        }

        public Options withSize(long n) {
            return new Options(databaseUrl, n, messages, batch, repeats, payloadBytes);
        }

        public Options withMessages(int n) {
            return new Options(databaseUrl, size, n, batch, repeats, payloadBytes);
        }

        public Options withBatch(int n) {
            return new Options(databaseUrl, size, messages, n, repeats, payloadBytes);
        }

        public Options withRepeats(int n) {
            return new Options(databaseUrl, size, messages, batch, n, payloadBytes);
        }

        public Options withPayloadBytes(int n) {
            return new Options(databaseUrl, size, messages, batch, repeats, n);
        }
    }

    /**
     * The outcome.
     *
     * @param options      what was run
     * @param environment  where it ran
     * @param fillSeconds  how long writing the backlog took
     * @param backlogMs    each measurement on A (cursor at the start of the backlog), in order
     * @param emptyMs      each measurement on B (only the working set)
     * @param historyMs    each measurement on A after the backlog (the backlog behind the cursor)
     * @param lost         working-set messages that did not reach a handler within the timeout (must be 0)
     */
    public record Result(Options options, ProduceBenchmark.Environment environment, double fillSeconds,
                         List<Double> backlogMs, List<Double> emptyMs, List<Double> historyMs, long lost)
            implements ScenarioResult {
        public Result {
            backlogMs = List.copyOf(backlogMs);
            emptyMs = List.copyOf(emptyMs);
            historyMs = List.copyOf(historyMs);
        }

        /** Median time to claim and deliver K messages at the start of the backlog. */
        public double backlogClaimMs() {
            return BenchJson.median(backlogMs);
        }

        /** Median time to claim and deliver K messages on the stream holding only them. */
        public double emptyClaimMs() {
            return BenchJson.median(emptyMs);
        }

        /** Median time to claim and deliver K messages appended after the backlog. */
        public double historyClaimMs() {
            return BenchJson.median(historyMs);
        }

        /** backlog ÷ empty. */
        public double ratio() {
            return backlogClaimMs() / emptyClaimMs();
        }

        @Override
        public List<Map<String, Object>> runLines() {
            Map<String, Object> m = BenchJson.runLine(SCENARIO, 1);
            m.put("backlog_ms", backlogMs.stream().map(v -> BenchJson.round(v, 2)).toList());
            m.put("empty_ms", emptyMs.stream().map(v -> BenchJson.round(v, 2)).toList());
            m.put("history_ms", historyMs.stream().map(v -> BenchJson.round(v, 2)).toList());
            m.put("fill_s", BenchJson.round(fillSeconds, 1));
            return List.of(m);
        }

        @Override
        public Map<String, Object> summary() {
            Map<String, Object> m = BenchJson.summaryLine(SCENARIO, BenchJson.round(backlogClaimMs(), 2),
                    BenchJson.round(emptyClaimMs(), 2), REFERENCE, BenchJson.round(ratio(), 3), UNIT, environment);
            m.put("duration_s", null);
            m.put("empty_claim_ms", BenchJson.round(emptyClaimMs(), 2));
            m.put("backlog_claim_ms", BenchJson.round(backlogClaimMs(), 2));
            m.put("history_claim_ms", BenchJson.round(historyClaimMs(), 2));
            m.put("history_ratio", BenchJson.round(historyClaimMs() / emptyClaimMs(), 3));
            m.put("backlog_size", options.size());
            m.put("messages", options.messages());
            m.put("batch_size", options.batch());
            m.put("repeats", options.repeats());
            m.put("payload_bytes", options.payloadBytes());
            m.put("fill_s", BenchJson.round(fillSeconds, 1));
            m.put("embedded", environment.embedded());
            m.put("lost", lost);
            return m;
        }

        @Override
        public List<String> problems() {
            return lost == 0 ? List.of() : List.of(lost + " working-set messages never reached a handler");
        }
    }

    /** Runs the benchmark without progress callbacks. */
    public Result run(Options options) {
        return run(options, ScenarioListener.NONE);
    }

    /** Runs the benchmark, reporting progress to {@code listener}. */
    public Result run(Options options, ScenarioListener listener) {
        Objects.requireNonNull(options, "options");
        return ScenarioRunner.run(ScenarioRunner.Setup.of(options.databaseUrl(), "the benchmark", 6), listener,
                c -> measure(c, options));
    }

    private Result measure(ScenarioRunner.Context c, Options o) throws SQLException {
        Connection admin = c.admin();
        String schema = c.schema();
        Stream<byte[]> full = c.sluice().stream("bench.backlog");
        Stream<byte[]> empty = c.sluice().stream("bench.empty");
        StreamInfo a = full.register(StreamConfig.defaults());
        StreamInfo b = empty.register(StreamConfig.defaults());

        c.listener().phase(1, "writing " + o.size() + " messages into the backlog");
        long fillStart = System.nanoTime();
        fill(admin, schema, a, 0, o.size(), o.payloadBytes());
        double fillSeconds = (System.nanoTime() - fillStart) / 1e9;
        // The history working set: K more after the backlog, for a group that starts past it.
        fill(admin, schema, a, o.size(), o.messages(), o.payloadBytes());
        fill(admin, schema, b, 0, o.messages(), o.payloadBytes());
        // As autovacuum would after a bulk load; fresh statistics for both logs alike.
        Bench.execute(admin, "ANALYZE " + log(schema, a));
        Bench.execute(admin, "ANALYZE " + log(schema, b));
        Bench.checkpoint(admin);

        c.listener().phase(1, "claiming");
        AtomicLong lost = new AtomicLong();
        // One warm-up each (connections, plans, the working set's pages), not counted.
        claim(full, "warm-backlog", StartPosition.beginning(), o, lost);
        claim(full, "warm-history", StartPosition.atId(o.size() + 1), o, lost);
        claim(empty, "warm-empty", StartPosition.beginning(), o, lost);
        List<Double> backlogMs = new ArrayList<>();
        List<Double> emptyMs = new ArrayList<>();
        List<Double> historyMs = new ArrayList<>();
        for (int i = 1; i <= o.repeats(); i++) {
            // Rotate the order so that no stream always goes first after the others.
            for (int k = 0; k < 3; k++) {
                switch ((i + k) % 3) {
                    case 0 -> backlogMs.add(claim(full, "backlog-" + i, StartPosition.beginning(), o, lost));
                    case 1 -> emptyMs.add(claim(empty, "empty-" + i, StartPosition.beginning(), o, lost));
                    default -> historyMs.add(claim(full, "history-" + i, StartPosition.atId(o.size() + 1), o, lost));
                }
            }
        }
        Result r = new Result(o, c.environment(), fillSeconds, backlogMs, emptyMs, historyMs, lost.get());
        c.listener().finished(r.runLines().get(0));
        return r;
    }

    private static String log(String schema, StreamInfo s) {
        return Bench.quote(schema) + ".message_log_" + s.id();
    }

    /**
     * Writes {@code count} messages into the stream's log by plain SQL, ids from the log's own sequence,
     * with the values Sluice stores for a byte[] payload; creates the partitions they need first.
     */
    private static void fill(Connection admin, String schema, StreamInfo s, long already, long count, int payloadBytes)
            throws SQLException {
        long partitionSize = s.config().partitionSize();
        // Partitions through the last id plus the ids Sluice keeps ready ahead (1024, at least one partition).
        long last = (already + count + 1024) / partitionSize + 1;
        for (long k = 0; k <= last; k++) {
            Bench.execute(admin, "CREATE TABLE IF NOT EXISTS " + Bench.quote(schema) + ".message_log_" + s.id() + "_" + k
                    + " PARTITION OF " + log(schema, s) + " FOR VALUES FROM (" + k * partitionSize + ") TO ("
                    + (k + 1) * partitionSize + ")");
        }
        // 16 distinct bytes per md5, repeated to the payload size; varies by row so pages are realistic.
        String insert = "INSERT INTO " + log(schema, s) + " (schema_version, content_type, payload)"
                + " SELECT ?, ?, substring(decode(repeat(md5(g::text), ?), 'hex') FROM 1 FOR ?)"
                + " FROM generate_series(?::bigint, ?::bigint) g";
        try (PreparedStatement ps = admin.prepareStatement(insert)) {
            for (long done = 0; done < count; done += FILL_CHUNK) {
                long n = Math.min(FILL_CHUNK, count - done);
                ps.setInt(1, Bench.SCHEMA_VERSION);
                ps.setString(2, Bench.CONTENT_TYPE);
                ps.setInt(3, (payloadBytes + 15) / 16);
                ps.setInt(4, payloadBytes);
                ps.setLong(5, already + done + 1);
                ps.setLong(6, already + done + n);
                ps.executeUpdate();
            }
        }
    }

    /**
     * Registers a fresh group at {@code start}, consumes until K handlers returned and gives the time
     * from {@code consume()} returning to the K-th handler's return, in ms.
     */
    private static double claim(Stream<byte[]> stream, String groupName, StartPosition start, Options o, AtomicLong lost) {
        ConsumerGroup<byte[]> group = stream.consumerGroup(groupName);
        group.register(GroupConfig.builder().start(start).build());
        CountDownLatch done = new CountDownLatch(o.messages());
        long[] at = new long[1];
        AtomicLong handled = new AtomicLong();
        long begin;
        try (Consumption c = group.consume(m -> {
            if (handled.incrementAndGet() == o.messages()) {
                at[0] = System.nanoTime();
            }
            done.countDown();
            return Outcome.success();
        }, ConsumeOptions.defaults().withBatchSize(o.batch()))) {
            begin = System.nanoTime();
            if (!done.await(60, TimeUnit.SECONDS)) {
                lost.addAndGet(done.getCount());
                throw new BenchmarkException("only " + (o.messages() - done.getCount()) + " of " + o.messages()
                        + " messages reached a handler within 60 s (group " + groupName + ")");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BenchmarkException("interrupted while claiming", e);
        }
        // The K-th increment happened before its countDown, which await observed: at[0] is visible here.
        return Math.max(0, at[0] - begin) / 1e6;
    }
}
