package dev.sluice.bench;

import dev.sluice.ProduceOptions;
import dev.sluice.Produced;
import dev.sluice.Producer;
import dev.sluice.ProducerConfig;
import dev.sluice.Sluice;
import dev.sluice.Stream;
import dev.sluice.StreamConfig;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * The {@code produce} benchmark: N caller threads share one {@link Producer} and produce payloads
 * through its batcher for D seconds; beside that figure it measures, in the same run on the same
 * server, the {@code raw-insert} reference: the same rows written by plain batched
 * {@code INSERT ... SELECT * FROM unnest(...)} into an equivalent table, in transactions of the mean
 * batch size Sluice achieved, over as many connections as the producer keeps transactions in flight.
 *
 * <p>Each run does ours first, then the reference (the reference needs the batch size ours reached);
 * every run uses a fresh stream and a fresh reference table in a schema of its own
 * ({@code bench_<random>}), which is dropped at the end. With no database URL a temporary embedded
 * PostgreSQL (durable settings) is started and stopped.
 *
 * <pre>{@code
 * ProduceBenchmark.Result r = new ProduceBenchmark().run(ProduceBenchmark.Options.defaults().withRuns(3));
 * System.out.println(BenchJson.line(r.summary()));
 * }</pre>
 */
public final class ProduceBenchmark {
    /** The scenario name in results. */
    public static final String SCENARIO = "produce";
    /** The unit of {@code ours} and {@code reference}. */
    public static final String UNIT = "msgs/s";
    /** The name of the reference. */
    public static final String REFERENCE = "raw-insert";

    /**
     * What to run.
     *
     * @param databaseUrl     JDBC URL of the server to measure; {@code null} starts a temporary embedded one
     * @param callers         threads calling {@code produce} concurrently (default 8)
     * @param duration        the measured window of each phase (default 20 s)
     * @param warmup          time each phase runs before the window opens, not counted (default 3 s)
     * @param payloadBytes    payload size (default 1024; random bytes, generated once per thread)
     * @param idempotencyKeys give every message a unique idempotency key (default false)
     * @param runs            how many times to repeat ours and the reference; medians are reported (default 1)
     */
    public record Options(String databaseUrl, int callers, Duration duration, Duration warmup, int payloadBytes,
                          boolean idempotencyKeys, int runs) {
        public Options {
            Objects.requireNonNull(duration, "duration");
            Objects.requireNonNull(warmup, "warmup");
            if (callers < 1 || callers > 1024) {
                throw new IllegalArgumentException("callers must be between 1 and 1024 (got " + callers + ")");
            }
            if (duration.isNegative() || duration.isZero()) {
                throw new IllegalArgumentException("duration must be positive (got " + duration + ")");
            }
            if (warmup.isNegative()) {
                throw new IllegalArgumentException("warmup must not be negative (got " + warmup + ")");
            }
            if (payloadBytes < 1 || payloadBytes > StreamConfig.DEFAULT_MAX_PAYLOAD_BYTES) {
                throw new IllegalArgumentException("payload bytes must be between 1 and "
                        + StreamConfig.DEFAULT_MAX_PAYLOAD_BYTES + " (got " + payloadBytes + ")");
            }
            if (runs < 1 || runs > 100) {
                throw new IllegalArgumentException("runs must be between 1 and 100 (got " + runs + ")");
            }
            if (databaseUrl != null && databaseUrl.isBlank()) {
                databaseUrl = null;
            }
        }

        /** The defaults: embedded server, 8 callers, 20 s after 3 s of warm-up, 1 KB, no keys, 1 run. */
        public static Options defaults() {
            return new Options(null, 8, Duration.ofSeconds(20), Duration.ofSeconds(3), 1024, false, 1);
        }

        public Options withDatabaseUrl(String url) {
            return new Options(url, callers, duration, warmup, payloadBytes, idempotencyKeys, runs);
        }

        public Options withCallers(int n) {
            return new Options(databaseUrl, n, duration, warmup, payloadBytes, idempotencyKeys, runs);
        }

        public Options withDuration(Duration d) {
            return new Options(databaseUrl, callers, d, warmup, payloadBytes, idempotencyKeys, runs);
        }

        public Options withWarmup(Duration d) {
            return new Options(databaseUrl, callers, duration, d, payloadBytes, idempotencyKeys, runs);
        }

        public Options withPayloadBytes(int n) {
            return new Options(databaseUrl, callers, duration, warmup, n, idempotencyKeys, runs);
        }

        public Options withIdempotencyKeys(boolean on) {
            return new Options(databaseUrl, callers, duration, warmup, payloadBytes, on, runs);
        }

        public Options withRuns(int n) {
            return new Options(databaseUrl, callers, duration, warmup, payloadBytes, idempotencyKeys, n);
        }
    }

    /**
     * Where the benchmark ran.
     *
     * @param postgresVersion {@code server_version} of the server
     * @param cores           processors available to this JVM
     * @param embedded        whether a temporary embedded server was started for the run
     * @param schema          the schema the benchmark worked in (dropped at the end)
     */
    public record Environment(String postgresVersion, int cores, boolean embedded, String schema) {
    }

    /**
     * One run: ours, then the reference.
     *
     * @param run                  1-based run number
     * @param ours                 messages per second produced through the batcher in the window
     * @param reference            rows per second of the raw-insert reference in its window
     * @param ratio                ours ÷ reference
     * @param batchSize            mean messages per producing transaction in our window (from {@code xmin})
     * @param referenceBatchSize   mean rows per reference transaction in its window; the reference mixes
     *                             transactions of ⌊batchSize⌋ and ⌈batchSize⌉ rows so that this equals {@code batchSize}
     * @param referenceConnections concurrent reference connections (the producer's {@code maxInFlight})
     * @param oursMessages         messages our callers saw committed inside the window
     * @param referenceMessages    rows the reference committed inside the window
     * @param windowSeconds        length of each measured window
     * @param produced             messages our callers saw committed in the whole phase, warm-up included
     * @param duplicates           produce calls answered as duplicates (must be 0: every key is unique)
     * @param logRows              rows in the stream's log after the producer closed (must equal {@code produced})
     * @param referenceCommitted   rows the reference committed in the whole phase
     * @param referenceRows        rows in the reference table afterwards (must equal {@code referenceCommitted})
     */
    public record RunResult(int run, double ours, double reference, double ratio, double batchSize,
                            double referenceBatchSize, int referenceConnections, long oursMessages,
                            long referenceMessages, double windowSeconds, long produced, long duplicates,
                            long logRows, long referenceCommitted, long referenceRows) {

        /** Messages our callers were told were committed but that are not in the log (must be 0). */
        public long lost() {
            return produced - logRows;
        }

        /** This run as one JSON-ready object (a line before the summary). */
        public Map<String, Object> toJson(Options options) {
            Map<String, Object> m = BenchJson.putFigures(BenchJson.runLine(SCENARIO, run), BenchJson.round(ours, 1),
                    BenchJson.round(reference, 1), REFERENCE, BenchJson.round(ratio, 3), UNIT);
            m.put("batch_size", BenchJson.round(batchSize, 2));
            m.put("reference_batch_size", BenchJson.round(referenceBatchSize, 2));
            m.put("reference_connections", referenceConnections);
            m.put("callers", options.callers());
            m.put("idempotency_keys", options.idempotencyKeys());
            m.put("duration_s", windowSeconds);
            m.put("ours_messages", oursMessages);
            m.put("reference_messages", referenceMessages);
            m.put("produced", produced);
            m.put("log_rows", logRows);
            m.put("lost", lost());
            m.put("duplicates", duplicates);
            m.put("reference_committed", referenceCommitted);
            m.put("reference_rows", referenceRows);
            return m;
        }
    }

    /**
     * The outcome: every run and the medians.
     *
     * @param options     what was run
     * @param environment where it ran
     * @param runs        each run, in order
     * @param ours        median of our msgs/s
     * @param reference   median of the reference's msgs/s
     * @param ratio       median of the per-run ratios (each ratio pairs figures measured back to back)
     * @param batchSize   median of the mean batch sizes
     */
    public record Result(Options options, Environment environment, List<RunResult> runs, double ours,
                         double reference, double ratio, double batchSize) implements ScenarioResult {
        public Result {
            runs = List.copyOf(runs);
        }

        static Result of(Options options, Environment environment, List<RunResult> runs) {
            return new Result(options, environment, runs, Bench.median(runs, RunResult::ours),
                    Bench.median(runs, RunResult::reference), Bench.median(runs, RunResult::ratio),
                    Bench.median(runs, RunResult::batchSize));
        }

        /** Messages lost across all runs (committed per the producer, missing from the log); must be 0. */
        public long lost() {
            return runs.stream().mapToLong(RunResult::lost).sum();
        }

        @Override
        public List<Map<String, Object>> runLines() {
            return runs.stream().map(r -> r.toJson(options)).toList();
        }

        @Override
        public List<String> problems() {
            return lost() == 0 ? List.of()
                    : List.of(lost() + " messages were reported committed but are missing from the log");
        }

        /** The summary line (docs/benchmarks.md, "JSON output"). */
        @Override
        public Map<String, Object> summary() {
            Map<String, Object> m = BenchJson.summaryLine(SCENARIO, BenchJson.round(ours, 1),
                    BenchJson.round(reference, 1), REFERENCE, BenchJson.round(ratio, 3), UNIT, environment);
            m.put("duration_s", options.duration().toNanos() / 1e9);
            m.put("warmup_s", options.warmup().toNanos() / 1e9);
            m.put("batch_size", BenchJson.round(batchSize, 2));
            m.put("callers", options.callers());
            m.put("idempotency_keys", options.idempotencyKeys());
            m.put("payload_bytes", options.payloadBytes());
            m.put("runs", runs.size());
            m.put("reference_connections", runs.isEmpty() ? null : runs.get(0).referenceConnections());
            m.put("embedded", environment.embedded());
            m.put("lost", lost());
            return m;
        }
    }

    /**
     * Progress callbacks (all optional), called on the thread that runs the benchmark: those of every
     * scenario, and each finished run as a {@link RunResult} (right after {@link #finished(Map) its line}).
     */
    public interface Listener extends ScenarioListener {
        /** A phase ({@code "ours"} or {@link #REFERENCE}) of a run begins. */
        @Override
        default void phase(int run, String phase) {
        }

        /** A run finished. */
        default void finished(RunResult run) {
        }
    }

    /** Runs the benchmark without progress callbacks. */
    public Result run(Options options) {
        return run(options, new Listener() {
        });
    }

    /** Runs the benchmark, reporting progress to {@code listener}. */
    public Result run(Options options, Listener listener) {
        Objects.requireNonNull(options, "options");
        // The producer's transactions in flight, and two spare.
        ScenarioRunner.Setup setup = ScenarioRunner.Setup.of(options.databaseUrl(), "the produce benchmark",
                ProducerConfig.defaults().maxInFlight() + 2);
        return ScenarioRunner.run(setup, listener, c -> measure(c, options, listener));
    }

    /** Each run: ours, then the reference with the batch size ours reached. */
    private Result measure(ScenarioRunner.Context c, Options o, Listener listener) throws SQLException {
        ProducerConfig producerConfig = ProducerConfig.defaults();
        List<RunResult> runs = c.runs(o.runs(), run -> {
            listener.phase(run, "ours");
            OursPhase ours = ours(c.sluice(), producerConfig, c.admin(), c.schema(), run, o);
            listener.phase(run, REFERENCE);
            ReferencePhase ref = reference(c.dataSource(), c.admin(), c.schema(), run, ours.batchSize(),
                    producerConfig.maxInFlight(), o);
            double oursRate = ours.windowMessages() / ours.seconds();
            double refRate = ref.windowRows() / ref.seconds();
            return new RunResult(run, oursRate, refRate, oursRate / refRate, ours.batchSize(), ref.windowBatchSize(),
                    producerConfig.maxInFlight(), ours.windowMessages(), ref.windowRows(), ours.seconds(),
                    ours.produced(), ours.duplicates(), ours.logRows(), ref.committed(), ref.tableRows());
        }, r -> {
            listener.finished(r.toJson(o));
            listener.finished(r);
        });
        return Result.of(o, c.environment(), runs);
    }

    // ---------------------------------------------------------------- ours

    private record OursPhase(long windowMessages, double seconds, double batchSize, long produced, long duplicates,
                             long logRows) {
    }

    /** What one caller thread saw; written by that thread only, read after it was joined. */
    private static final class CallerTally {
        long produced;
        long duplicates;
        long windowMessages;
        long windowMinId = Long.MAX_VALUE;
        long windowMaxId = Long.MIN_VALUE;
    }

    private OursPhase ours(Sluice sluice, ProducerConfig config, Connection admin, String schema, int run, Options o)
            throws SQLException {
        Stream<byte[]> stream = sluice.stream("bench.produce-" + run);
        stream.register(StreamConfig.defaults());
        long streamId = stream.get().orElseThrow(() -> new BenchmarkException("the stream vanished after registration")).id();
        String log = Bench.quote(schema) + ".message_log_" + streamId;
        Bench.checkpoint(admin);

        CallerTally[] tallies = new CallerTally[o.callers()];
        for (int i = 0; i < tallies.length; i++) {
            tallies[i] = new CallerTally();
        }
        Phase phase = Phase.start(o.warmup(), o.duration());
        try (Producer<byte[]> producer = stream.producer(config)) {
            phase.run(o.callers(), "bench-caller-", i -> {
                CallerTally t = tallies[i];
                byte[] payload = Bench.randomBytes(o.payloadBytes());
                // Unique per stream and caller; the key is built per message like an application would.
                String keyPrefix = o.idempotencyKeys() ? "r" + run + "-c" + i + "-" : null;
                long seq = 0;
                while (phase.running()) {
                    ProduceOptions options = keyPrefix == null ? ProduceOptions.NONE
                            : ProduceOptions.idempotent(keyPrefix + seq++);
                    Produced p = producer.produce(payload, options);
                    long now = System.nanoTime();
                    if (p.duplicate()) {
                        t.duplicates++;
                        continue;
                    }
                    t.produced++;
                    if (phase.measured(now)) {
                        t.windowMessages++;
                        t.windowMinId = Math.min(t.windowMinId, p.id());
                        t.windowMaxId = Math.max(t.windowMaxId, p.id());
                    }
                }
            });
        }
        long produced = 0;
        long duplicates = 0;
        long window = 0;
        long minId = Long.MAX_VALUE;
        long maxId = Long.MIN_VALUE;
        for (CallerTally t : tallies) {
            produced += t.produced;
            duplicates += t.duplicates;
            window += t.windowMessages;
            minId = Math.min(minId, t.windowMinId);
            maxId = Math.max(maxId, t.windowMaxId);
        }
        if (window == 0) {
            throw new BenchmarkException("no message was produced inside the measured window of run " + run);
        }
        long logRows = Bench.queryLong(admin, "SELECT count(*) FROM " + log);
        // The batch size actually achieved, read back from the database: each batch is one transaction,
        // so messages per distinct inserting xid over the rows of the window (the ids our callers got).
        double batchSize;
        try (PreparedStatement ps = admin.prepareStatement("SELECT count(*)::float8 / count(DISTINCT xmin::text::bigint) FROM "
                + log + " WHERE id BETWEEN ? AND ?")) {
            ps.setLong(1, minId);
            ps.setLong(2, maxId);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                batchSize = rs.getDouble(1);
            }
        }
        // Free the space before the reference runs; the counts above are all we keep.
        stream.destroy(true);
        return new OursPhase(window, phase.seconds(), batchSize, produced, duplicates, logRows);
    }

    // ---------------------------------------------------------------- reference

    private record ReferencePhase(long windowRows, long windowTransactions, double seconds, long committed,
                                  long tableRows) {
        double windowBatchSize() {
            return (double) windowRows / windowTransactions;
        }
    }

    /** What one reference connection committed; written by its thread only, read after the join. */
    private static final class ConnectionTally {
        long committed;
        long windowRows;
        long windowTransactions;
    }

    /**
     * The raw-insert reference: {@code connections} threads, each on its own connection with a prepared
     * statement and auto-commit off, looping one multi-row insert and a commit. Transactions carry
     * ⌊meanBatch⌋ or ⌈meanBatch⌉ rows, spread evenly so that their mean is {@code meanBatch}: the
     * transaction count, which is what a durable commit costs, then matches ours. (Rounding to one
     * size instead would be up to half a row per transaction off, a double-digit error at small batches.)
     */
    private ReferencePhase reference(DataSource ds, Connection admin, String schema, int run, double meanBatch,
                                     int connections, Options o) throws SQLException {
        if (!(meanBatch >= 1)) {
            throw new BenchmarkException("mean batch size " + meanBatch + " of run " + run + " is below 1");
        }
        String table = Bench.quote(schema) + ".raw_insert_" + run;
        try (Statement s = admin.createStatement()) {
            // The columns, types and defaults of message_log_<id> (unpartitioned: the plain-table floor).
            s.execute("CREATE TABLE " + table + " (" + Bench.LOG_COLUMNS + ")");
        }
        Bench.checkpoint(admin);
        String insert = "INSERT INTO " + table + " (schema_version, content_type, payload) "
                + "SELECT * FROM unnest(?::int[], ?::text[], ?::bytea[])";
        int low = (int) Math.floor(meanBatch);
        ConnectionTally[] tallies = new ConnectionTally[connections];
        for (int i = 0; i < connections; i++) {
            tallies[i] = new ConnectionTally();
        }
        Phase phase = Phase.start(o.warmup(), o.duration());
        phase.run(connections, "bench-raw-insert-", i -> {
            ConnectionTally t = tallies[i];
            // Rows for a low and a high transaction, random payloads made once like our callers'.
            Rows[] rows = {Rows.random(low, o.payloadBytes()), Rows.random(low + 1, o.payloadBytes())};
            try (Connection c = ds.getConnection()) {
                c.setAutoCommit(false);
                try (PreparedStatement ps = c.prepareStatement(insert)) {
                    long transactions = 0;
                    while (phase.running()) {
                        transactions++;
                        // floor(k * mean) - floor((k - 1) * mean) is low or low + 1, averaging mean.
                        long size = (long) Math.floor(transactions * meanBatch) - (long) Math.floor((transactions - 1) * meanBatch);
                        Rows r = rows[size > low ? 1 : 0];
                        // Arrays are built per transaction, as they would be for rows that differ each time.
                        ps.setArray(1, c.createArrayOf("int4", r.versions()));
                        ps.setArray(2, c.createArrayOf("text", r.contentTypes()));
                        ps.setArray(3, c.createArrayOf("bytea", r.payloads()));
                        int n = ps.executeUpdate();
                        c.commit();
                        long now = System.nanoTime();
                        if (n != r.payloads().length) {
                            throw new BenchmarkException("the reference inserted " + n + " rows instead of "
                                    + r.payloads().length);
                        }
                        t.committed += n;
                        if (phase.measured(now)) {
                            t.windowRows += n;
                            t.windowTransactions++;
                        }
                    }
                }
            }
        });
        long committed = 0;
        long window = 0;
        long windowTransactions = 0;
        for (ConnectionTally t : tallies) {
            committed += t.committed;
            window += t.windowRows;
            windowTransactions += t.windowTransactions;
        }
        long tableRows = Bench.queryLong(admin, "SELECT count(*) FROM " + table);
        try (Statement s = admin.createStatement()) {
            s.execute("DROP TABLE " + table);
        }
        if (window == 0) {
            throw new BenchmarkException("the reference committed nothing inside the measured window of run " + run);
        }
        return new ReferencePhase(window, windowTransactions, phase.seconds(), committed, tableRows);
    }

    /** The column values of one reference transaction: what Sluice writes for a byte[] payload without options. */
    private record Rows(Integer[] versions, String[] contentTypes, byte[][] payloads) {
        static Rows random(int n, int payloadBytes) {
            Integer[] versions = new Integer[n];
            String[] types = new String[n];
            byte[][] payloads = new byte[n][];
            Arrays.fill(versions, Bench.SCHEMA_VERSION);
            Arrays.fill(types, Bench.CONTENT_TYPE);
            for (int k = 0; k < n; k++) {
                payloads[k] = Bench.randomBytes(payloadBytes);
            }
            return new Rows(versions, types, payloads);
        }
    }
}
