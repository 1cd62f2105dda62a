package dev.sluice.bench;

import dev.sluice.ConsumeOptions;
import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.GroupConfig;
import dev.sluice.Outcome;
import dev.sluice.Stream;
import dev.sluice.StreamConfig;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The {@code idle} benchmark: G consumer groups (default 20) of one stream, each with a live
 * consumption (default options: wake-ups on), and no traffic for D seconds (default 60). It counts
 * what the server executed in the window and divides by the window and by G:
 *
 * <ul>
 *   <li>statements: {@code pg_stat_statements} call counts of the database (our own meter queries
 *       excluded), when the extension can be used. Without {@code --database-url} the benchmark starts
 *       its own temporary embedded PostgreSQL with {@code shared_preload_libraries=pg_stat_statements}
 *       (and the durable settings of {@code EmbeddedPostgresServer}), so it always can. On a server
 *       without the library it falls back to committed + rolled-back transactions from
 *       {@code pg_stat_database} and says so in {@code statement_source};</li>
 *   <li>transaction ids: {@code pg_current_xact_id()} read at the start and at the end of the window
 *       (each read takes one id itself; the end read's own is subtracted). These are the whole server's,
 *       autovacuum included (an ANALYZE takes one per table, and catalogs get analyzed after the DDL of
 *       registration), so the run also reports autovacuum runs in the window and the WAL records the
 *       counted statements wrote: a client statement that takes an xid writes (a row, a row lock), so
 *       0 WAL records means the clients took none;</li>
 *   <li>transactions: {@code pg_stat_database.xact_commit + xact_rollback}, our own meter
 *       transactions subtracted (statistics are flushed lazily, so this one is approximate).</li>
 * </ul>
 *
 * <p>Everything on the database counts, so use a server nobody else uses at the time (the embedded one
 * is). There is no reference: the target is near zero.
 *
 * <p>It also reports the consuming process's footprint ({@link ClientFootprint}): its live threads
 * before any consumption started and their peak over the window, and the heap per group, the used heap
 * after a full GC with the consumptions running minus the same before they started, divided by G.
 */
public final class IdleBenchmark {
    /** The scenario name in results. */
    public static final String SCENARIO = "idle";
    /** The unit of {@code ours}. */
    public static final String UNIT = "stmts/s per idle group";
    /** Marks the benchmark's own queries so that they are not counted. */
    private static final String METER = "/* sluice-bench-meter */ ";

    /**
     * What to run.
     *
     * @param databaseUrl JDBC URL of the server to measure; {@code null} starts a temporary embedded one
     *                    with pg_stat_statements loaded
     * @param groups      idle groups, each with a live consumption (default 20)
     * @param duration    the measured window (default 60 s)
     * @param warmup      time after the consumptions started before the window opens (default 12 s): their
     *                    start-up (presence lock, first poll) is not idle work, and PostgreSQL flushes a
     *                    session's transaction statistics up to 10 s late, so a shorter wait would count
     *                    start-up transactions in the window
     */
    public record Options(String databaseUrl, int groups, Duration duration, Duration warmup) {
        public Options {
            Objects.requireNonNull(duration, "duration");
            Objects.requireNonNull(warmup, "warmup");
            if (groups < 1 || groups > 1000) {
                throw new IllegalArgumentException("groups must be between 1 and 1000 (got " + groups + ")");
            }
            if (duration.compareTo(Duration.ofSeconds(1)) < 0) {
                throw new IllegalArgumentException("duration must be at least 1s (got " + duration + ")");
            }
            if (warmup.isNegative()) {
                throw new IllegalArgumentException("warmup must not be negative (got " + warmup + ")");
            }
            if (databaseUrl != null && databaseUrl.isBlank()) {
                databaseUrl = null;
            }
        }

        /** The defaults: embedded server with pg_stat_statements, 20 groups, 60 s after 12 s. */
        public static Options defaults() {
            return new Options(null, 20, Duration.ofSeconds(60), Duration.ofSeconds(12));
        }

        public Options withDatabaseUrl(String url) {
            return new Options(url, groups, duration, warmup);
        }

        public Options withGroups(int n) {
            return new Options(databaseUrl, n, duration, warmup);
        }

        public Options withDuration(Duration d) {
            return new Options(databaseUrl, groups, d, warmup);
        }

        public Options withWarmup(Duration d) {
            return new Options(databaseUrl, groups, duration, d);
        }
    }

    /**
     * What the window cost.
     *
     * @param options             what was run
     * @param environment         where it ran
     * @param seconds             the window's length as measured
     * @param statementSource     {@code pg_stat_statements}, or {@code pg_stat_database (transactions)} when the
     *                            extension was not usable and transactions stand in for statements
     * @param statements          statements executed in the window (all sessions of the database, ours excluded)
     * @param transactions        transactions in the window (approximate; see the class comment)
     * @param xids                transaction ids assigned in the window (by anyone, autovacuum included)
     * @param autovacuumRuns      autovacuum and autoanalyze runs on the database's tables in the window
     * @param statementWalRecords WAL records written by the counted statements (null without pg_stat_statements);
     *                            0 means no client statement wrote anything, so none took a transaction id
     * @param writes              calls of the counted statements that wrote WAL (null without pg_stat_statements): in
     *                            an idle window the fleet heartbeat and the manager's passes; the benchmark runs
     *                            one process, so this over the window is the per-process write rate
     * @param topStatements       the most frequent statements of the window (calls, query text shortened)
     * @param deliveries          handler calls of the idle consumers (must be 0: nothing was produced)
     * @param threadsBaseline     live JVM threads of this process after the groups were registered, before any
     *                            consumption started
     * @param threads             the most live JVM threads of this process at once during the window, with every
     *                            consumption started and settled
     * @param heapBaselineBytes   heap in use after a full GC before any consumption started
     * @param heapBytes           heap in use after a full GC right after the window, every consumption still running
     */
    public record Result(Options options, ProduceBenchmark.Environment environment, double seconds,
                         String statementSource, long statements, long transactions, long xids, long autovacuumRuns,
                         Long statementWalRecords, Long writes, List<Map<String, Object>> topStatements, long deliveries,
                         int threadsBaseline, int threads, long heapBaselineBytes, long heapBytes)
            implements ScenarioResult {
        public Result {
            topStatements = List.copyOf(topStatements);
        }

        /** Statements per second per idle group. */
        public double statementsPerSecondPerGroup() {
            return statements / seconds / options.groups();
        }

        /** Writing statements per second of the one consuming process (null without pg_stat_statements). */
        public Double writesPerSecondPerProcess() {
            return writes == null ? null : writes / seconds;
        }

        /** Transaction ids per second per idle group. */
        public double xidsPerSecondPerGroup() {
            return xids / seconds / options.groups();
        }

        /**
         * Heap per idle group: (heap with the consumptions running − heap before them) ÷ groups, both after a
         * full GC; rounded to whole bytes.
         */
        public long heapBytesPerGroup() {
            return Math.round((heapBytes - heapBaselineBytes) / (double) options.groups());
        }

        /** Transactions per second per idle group (approximate). */
        public double transactionsPerSecondPerGroup() {
            return transactions / seconds / options.groups();
        }

        @Override
        public List<Map<String, Object>> runLines() {
            Map<String, Object> m = BenchJson.runLine(SCENARIO, 1);
            m.put("statements", statements);
            m.put("transactions", transactions);
            m.put("xids", xids);
            m.put("autovacuum_runs", autovacuumRuns);
            m.put("statement_wal_records", statementWalRecords);
            m.put("writes", writes);
            m.put("window_s", BenchJson.round(seconds, 3));
            m.put("top_statements", topStatements);
            putFootprint(m);
            return List.of(m);
        }

        @Override
        public Map<String, Object> summary() {
            Map<String, Object> m = BenchJson.summaryLine(SCENARIO, BenchJson.round(statementsPerSecondPerGroup(), 4),
                    null, null, null, UNIT, environment);
            m.put("duration_s", options.duration().toNanos() / 1e9);
            m.put("groups", options.groups());
            m.put("stmts_per_s_per_group", BenchJson.round(statementsPerSecondPerGroup(), 4));
            m.put("xids_per_s_per_group", BenchJson.round(xidsPerSecondPerGroup(), 4));
            m.put("xacts_per_s_per_group", BenchJson.round(transactionsPerSecondPerGroup(), 4));
            m.put("statement_source", statementSource);
            m.put("statements", statements);
            m.put("xids", xids);
            m.put("autovacuum_runs", autovacuumRuns);
            m.put("statement_wal_records", statementWalRecords);
            m.put("writes_per_s_per_process", writes == null ? null : BenchJson.round(writesPerSecondPerProcess(), 4));
            m.put("warmup_s", options.warmup().toNanos() / 1e9);
            m.put("embedded", environment.embedded());
            putFootprint(m);
            return m;
        }

        /** The client's footprint (docs/benchmarks.md, "sluice bench idle"): threads, then heap per group. */
        private void putFootprint(Map<String, Object> m) {
            m.put("threads", threads);
            m.put("threads_baseline", threadsBaseline);
            m.put("heap_bytes_per_group", heapBytesPerGroup());
        }

        @Override
        public List<String> problems() {
            return deliveries == 0 ? List.of()
                    : List.of(deliveries + " handler calls on streams nobody produced to");
        }
    }

    /** Runs the benchmark without progress callbacks. */
    public Result run(Options options) {
        return run(options, ScenarioListener.NONE);
    }

    /** Runs the benchmark, reporting progress to {@code listener}. */
    public Result run(Options options, ScenarioListener listener) {
        Objects.requireNonNull(options, "options");
        // A small pool, as a service would have: idle consumers borrow a connection only to poll.
        ScenarioRunner.Setup setup = ScenarioRunner.Setup.of(options.databaseUrl(), "the idle benchmark", 6)
                .startingWith(IdleBenchmark::startWithStatements);
        return ScenarioRunner.run(setup, listener, c -> measure(c, options));
    }

    /**
     * A temporary embedded PostgreSQL with pg_stat_statements loaded, otherwise configured as
     * {@code EmbeddedPostgresServer} is (durable, loopback only), whose settings cannot load a library.
     */
    private static ScenarioRunner.TemporaryServer startWithStatements() throws IOException {
        EmbeddedPostgres pg = EmbeddedPostgres.builder()
                .setDataDirectory(Files.createTempDirectory("sluice-pg-idle-"))
                .setCleanDataDirectory(true)
                .setServerConfig("fsync", "on")
                .setServerConfig("synchronous_commit", "on")
                .setServerConfig("full_page_writes", "on")
                .setServerConfig("listen_addresses", "localhost")
                .setServerConfig("max_connections", "200")
                .setServerConfig("shared_preload_libraries", "pg_stat_statements")
                .setLocaleConfig("locale", "C")
                .setPGStartupWait(Duration.ofSeconds(60))
                .start();
        return new ScenarioRunner.TemporaryServer() {
            @Override
            public String jdbcUrl() {
                return "jdbc:postgresql://localhost:" + pg.getPort() + "/postgres?user=postgres";
            }

            @Override
            public void close() throws IOException {
                pg.close();
            }
        };
    }

    private Result measure(ScenarioRunner.Context c, Options o) throws SQLException {
        Stream<byte[]> stream = c.sluice().stream("bench.idle");
        stream.register(StreamConfig.defaults());
        String pgss = statementsView(c.admin(), c.schema());
        List<ConsumerGroup<byte[]>> groups = new ArrayList<>();
        for (int g = 1; g <= o.groups(); g++) {
            ConsumerGroup<byte[]> group = stream.consumerGroup("idle-" + g);
            group.register(GroupConfig.defaults());
            groups.add(group);
        }
        AtomicLong deliveries = new AtomicLong();
        List<Consumption> consumptions = new ArrayList<>();
        Result r;
        // The client's footprint before any consumption: live threads, and the heap after a full GC.
        ClientFootprint before = ClientFootprint.now();
        try {
            c.listener().phase(1, "starting " + o.groups() + " consumers");
            for (ConsumerGroup<byte[]> group : groups) {
                consumptions.add(group.consume(m -> {
                    deliveries.incrementAndGet();
                    return Outcome.success();
                }, ConsumeOptions.defaults()));
            }
            sleep(o.warmup());
            c.listener().phase(1, "idle window");
            ClientFootprint.resetPeakThreads();
            Window w = window(c.admin(), pgss, o);
            // The peak of the window, then the heap with every consumption still running.
            ClientFootprint during = ClientFootprint.now();
            r = new Result(o, c.environment(), w.seconds(), w.source(), w.statements(), w.transactions(), w.xids(),
                    w.autovacuumRuns(), w.walRecords(), w.writes(), w.top(), deliveries.get(), before.threads(),
                    during.peakThreads(), before.usedHeap(), during.usedHeap());
        } finally {
            consumptions.forEach(Consumption::close);
        }
        c.listener().finished(r.runLines().get(0));
        return r;
    }

    /**
     * The qualified pg_stat_statements view when it can be read, else null. Creates the extension in the
     * benchmark's schema (dropped with it) when it is not installed yet; reading fails unless the server
     * loaded the library at start.
     */
    private static String statementsView(Connection admin, String schema) {
        try {
            String installedIn = null;
            try (Statement s = admin.createStatement(); ResultSet rs = s.executeQuery(METER
                    + "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace"
                    + " WHERE e.extname = 'pg_stat_statements'")) {
                if (rs.next()) {
                    installedIn = rs.getString(1);
                }
            }
            if (installedIn == null) {
                Bench.execute(admin, "CREATE EXTENSION pg_stat_statements SCHEMA " + Bench.quote(schema));
                installedIn = schema;
            }
            String view = Bench.quote(installedIn) + ".pg_stat_statements";
            Bench.queryLong(admin, METER + "SELECT count(*) FROM " + view);
            return view;
        } catch (SQLException e) {
            // Not available (library not preloaded, no contrib, no rights): fall back to transactions.
            return null;
        }
    }

    private record Snapshot(Map<Long, Long> calls, Map<Long, Long> wal, Map<Long, String> texts, long transactions,
                            long autovacuum) {
    }

    /** What the server executed in the window. */
    private record Window(double seconds, String source, long statements, long transactions, long xids,
                          long autovacuumRuns, Long walRecords, Long writes, List<Map<String, Object>> top) {
    }

    private Window window(Connection admin, String pgss, Options o) throws SQLException {
        // Order: statements, autovacuum runs, transactions, xid ... window ... xid, statements, autovacuum runs,
        // transactions: the meter's own transactions between the two transaction reads are known (below).
        Snapshot before = snapshot(admin, pgss);
        long xid0 = xid(admin);
        long start = System.nanoTime();
        sleep(o.duration());
        long xid1 = xid(admin);
        double seconds = (System.nanoTime() - start) / 1e9;
        Snapshot after = snapshot(admin, pgss);
        // Meter transactions counted in the span (each query is one auto-commit transaction): the first
        // transaction read itself (its commit is counted after its snapshot), both xid reads, and the
        // statements and autovacuum reads at the end.
        long meterTransactions = 4 + (pgss == null ? 0 : 1);
        long transactions = Math.max(0, after.transactions() - before.transactions() - meterTransactions);
        long statements;
        Long walRecords = null;
        Long writes = null;
        List<Map<String, Object>> top = new ArrayList<>();
        String source;
        if (pgss != null) {
            source = "pg_stat_statements";
            Map<Long, Long> delta = new HashMap<>();
            for (Map.Entry<Long, Long> e : after.calls().entrySet()) {
                long d = e.getValue() - before.calls().getOrDefault(e.getKey(), 0L);
                if (d > 0) {
                    delta.put(e.getKey(), d);
                }
            }
            statements = delta.values().stream().mapToLong(Long::longValue).sum();
            // WAL records the counted statements wrote: a statement that takes a transaction id writes
            // (an insert, an update, a lock on a row), so 0 here means the clients took no xid and the
            // window's xids were the server's own (autovacuum's ANALYZE of catalogs, for instance).
            walRecords = after.wal().entrySet().stream()
                    .mapToLong(e -> Math.max(0, e.getValue() - before.wal().getOrDefault(e.getKey(), 0L))).sum();
            // Calls of the statements that wrote WAL in the window: the writes of the idle process.
            writes = delta.entrySet().stream().filter(e -> after.wal().getOrDefault(e.getKey(), 0L)
                    - before.wal().getOrDefault(e.getKey(), 0L) > 0).mapToLong(Map.Entry::getValue).sum();
            delta.entrySet().stream().sorted(Map.Entry.<Long, Long>comparingByValue(Comparator.reverseOrder())).limit(10)
                    .forEach(e -> {
                        Map<String, Object> s = new LinkedHashMap<>();
                        s.put("calls", e.getValue());
                        String text = after.texts().getOrDefault(e.getKey(), "").replaceAll("\\s+", " ").trim();
                        s.put("query", text.length() > 160 ? text.substring(0, 160) + "..." : text);
                        top.add(s);
                    });
        } else {
            source = "pg_stat_database (transactions)";
            statements = transactions;
        }
        // xid1 is the end read's own id; xid0 + 1 .. xid1 - 1 were taken by everybody else.
        long xids = Math.max(0, xid1 - xid0 - 1);
        return new Window(seconds, source, statements, transactions, xids,
                Math.max(0, after.autovacuum() - before.autovacuum()), walRecords, writes, top);
    }

    private static Snapshot snapshot(Connection admin, String pgss) throws SQLException {
        Map<Long, Long> calls = new HashMap<>();
        Map<Long, Long> wal = new HashMap<>();
        Map<Long, String> texts = new HashMap<>();
        long transactions;
        if (pgss != null) {
            // Per statement of this database; the meter's own queries carry a marker and are left out.
            // (userid, queryid, toplevel) identifies an entry; summed per queryid here.
            try (PreparedStatement ps = admin.prepareStatement(METER + "SELECT queryid, sum(calls)::bigint, min(query),"
                    + " sum(wal_records)::bigint FROM " + pgss
                    + " WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
                    + " AND queryid IS NOT NULL AND query NOT LIKE '%sluice-bench-meter%' GROUP BY queryid");
                 ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    calls.put(rs.getLong(1), rs.getLong(2));
                    texts.put(rs.getLong(1), rs.getString(3));
                    wal.put(rs.getLong(1), rs.getLong(4));
                }
            }
        }
        // Autovacuum and autoanalyze runs (catalogs included): an autoanalyze takes a transaction id that
        // is the database's housekeeping, not a client's; counted so the xids can be told apart.
        long autovacuum = Bench.queryLong(admin, METER + "SELECT coalesce(sum(autovacuum_count + autoanalyze_count), 0)"
                + " FROM pg_stat_all_tables");
        transactions = Bench.queryLong(admin, METER + "SELECT xact_commit + xact_rollback FROM pg_stat_database"
                + " WHERE datname = current_database()");
        return new Snapshot(calls, wal, texts, transactions, autovacuum);
    }

    private static long xid(Connection admin) throws SQLException {
        return Bench.queryLong(admin, METER + "SELECT pg_current_xact_id()::text::bigint");
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BenchmarkException("interrupted while waiting", e);
        }
    }
}
