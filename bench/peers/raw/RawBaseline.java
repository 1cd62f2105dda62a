import java.nio.ByteBuffer;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The raw PostgreSQL references of bench/peers (a single-file program; pgjdbc comes from the sluice
 * jar: {@code java -cp sluice.jar RawBaseline.java JDBC_URL ...}). The fastest plain SQL a good
 * engineer would write for the same work, over the same driver, payload and durability:
 *
 * <ul>
 *   <li>{@code raw-insert}: the N rows (1 KB {@code bytea} payloads) into a plain table by
 *       {@code INSERT … SELECT unnest(?::bytea[])}, one statement (one transaction) per batch of
 *       {@code --enqueue-batch}, {@code --enqueue-callers} connections in parallel, as the systems enqueue;</li>
 *   <li>{@code raw-skip-locked}: {@code --workers} connections, each repeating: claim up to
 *       {@code --fetch} rows by {@code UPDATE … WHERE id IN (SELECT … FOR UPDATE SKIP LOCKED LIMIT n)
 *       RETURNING …} (one transaction), run the no-op handler on each, {@code DELETE} them in a second
 *       transaction: at-least-once, what any job system must do. The drain ends when the table is empty.</li>
 * </ul>
 *
 * <p>Both are measured after a warm-up that is not: {@code --warmup-jobs} rows inserted and drained the same
 * way (every driver does this).
 *
 * <p>Prints one line {@code PEERS_RESULT {json}} for bench/peers/run.sh (no pickup latency: a
 * reference has no wake-up path of its own).
 */
public final class RawBaseline {
    static String url;
    static int jobs = 100_000;
    static int enqueueBatch = 1000;
    static int enqueueCallers = 4;
    static int workers = 8;
    static int fetch = 256;
    static String schema = "peers_raw";
    static int warmupJobs = 100_000;

    public static void main(String[] args) throws Exception {
        parse(args);
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(url);
        String table = schema + ".jobs";
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
            s.execute("CREATE SCHEMA " + schema);
            s.execute("CREATE TABLE " + table + " (id bigserial PRIMARY KEY, created_at timestamptz NOT NULL DEFAULT now(), "
                    + "locked_at timestamptz, attempts int NOT NULL DEFAULT 0, payload bytea NOT NULL)");
        }
        byte[] pad = new byte[1024];
        ThreadLocalRandom.current().nextBytes(pad);

        if (warmupJobs > 0) {
            // Not measured: the same insert and drain, so the JIT has compiled the hot paths (every driver does this).
            log("raw: warm-up, " + warmupJobs + " rows");
            insert(ds, table, pad, -warmupJobs, 0);
            drain(ds, table, null, null, null);
            settle(ds, schema);
        }

        // raw-insert
        checkpoint(ds);
        log("raw-insert: " + jobs + " rows, INSERT … SELECT unnest x" + enqueueBatch + ", " + enqueueCallers + " connections");
        long t0 = System.nanoTime();
        insert(ds, table, pad, 0, jobs);
        double insertPerS = jobs / ((System.nanoTime() - t0) / 1e9);
        log(String.format("raw-insert: %.0f rows/s", insertPerS));

        // raw-skip-locked
        settle(ds, schema);
        log("raw-skip-locked: " + workers + " workers, claim " + fetch + " by UPDATE … SKIP LOCKED, DELETE in a second transaction");
        AtomicIntegerArray seen = new AtomicIntegerArray(jobs);
        AtomicLong handled = new AtomicLong();
        AtomicLong duplicates = new AtomicLong();
        t0 = System.nanoTime();
        drain(ds, table, seen, handled, duplicates);
        double drainS = (System.nanoTime() - t0) / 1e9;
        long remaining;
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*) FROM " + table)) {
            rs.next();
            remaining = rs.getLong(1);
        }
        double drainPerS = remaining == 0 && handled.get() == jobs ? jobs / drainS : Double.NaN;
        log(String.format("raw-skip-locked: %.0f jobs/s", jobs / drainS));
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP SCHEMA " + schema + " CASCADE");
        }
        System.out.println("PEERS_RESULT {\"system\":\"raw-insert\",\"enqueue_per_s\":" + num(insertPerS)
                + ",\"drain_per_s\":null,\"p50_ms\":null,\"p95_ms\":null,\"jobs\":" + jobs + ",\"payload_bytes\":1024"
                + ",\"settings\":\"INSERT … SELECT unnest(?::bytea[]) x" + enqueueBatch + ", " + enqueueCallers
                + " connections\"}");
        System.out.println("PEERS_RESULT {\"system\":\"raw-skip-locked\",\"enqueue_per_s\":null,\"drain_per_s\":"
                + num(drainPerS) + ",\"p50_ms\":null,\"p95_ms\":null,\"jobs\":" + jobs + ",\"handled\":" + handled.get()
                + ",\"duplicates\":" + duplicates.get() + ",\"remaining\":" + remaining + ",\"payload_bytes\":1024"
                + ",\"settings\":\"" + workers + " connections; UPDATE … SKIP LOCKED LIMIT " + fetch
                + " RETURNING, then DELETE … = ANY(ids)\"}");
    }

    /** Inserts rows with sequence numbers [from, to): one INSERT … SELECT unnest per batch, {@code enqueueCallers} connections. */
    static void insert(PGSimpleDataSource ds, String table, byte[] pad, int from, int to) throws Exception {
        AtomicInteger next = new AtomicInteger(from);
        inParallel(enqueueCallers, () -> {
            try (Connection conn = ds.getConnection();
                 PreparedStatement ps = conn.prepareStatement(
                         "INSERT INTO " + table + " (payload) SELECT unnest(?::bytea[])")) {
                for (;;) {
                    int first = next.getAndAdd(enqueueBatch);
                    if (first >= to) {
                        return null;
                    }
                    int last = Math.min(to, first + enqueueBatch);
                    byte[][] rows = new byte[last - first][];
                    for (int q = first; q < last; q++) {
                        rows[q - first] = payload(pad, q);
                    }
                    Array arr = conn.createArrayOf("bytea", rows);
                    ps.setArray(1, arr);
                    ps.executeUpdate();
                    arr.free();
                }
            }
        });
    }

    /**
     * Drains the table with {@code workers} connections until a claim comes back empty; tallies each handled
     * row's sequence number into {@code seen} (null: the warm-up, nothing tallied).
     */
    static void drain(PGSimpleDataSource ds, String table, AtomicIntegerArray seen, AtomicLong handled, AtomicLong duplicates)
            throws Exception {
        inParallel(workers, () -> {
            try (Connection conn = ds.getConnection();
                 PreparedStatement claim = conn.prepareStatement("UPDATE " + table
                         + " SET locked_at = now(), attempts = attempts + 1 WHERE id IN (SELECT id FROM " + table
                         + " WHERE locked_at IS NULL ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED) RETURNING id, payload");
                 PreparedStatement delete = conn.prepareStatement("DELETE FROM " + table + " WHERE id = ANY(?)")) {
                claim.setInt(1, fetch);
                for (;;) {
                    List<Long> ids = new ArrayList<>(fetch);
                    try (ResultSet rs = claim.executeQuery()) {
                        while (rs.next()) {
                            ids.add(rs.getLong(1));
                            // The no-op handler: read the job.
                            int seq = ByteBuffer.wrap(rs.getBytes(2)).getInt(0);
                            if (seen == null) {
                                continue;
                            }
                            if (seen.getAndSet(seq, 1) == 0) {
                                handled.incrementAndGet();
                            } else {
                                duplicates.incrementAndGet();
                            }
                        }
                    }
                    if (ids.isEmpty()) {
                        return null;
                    }
                    Array arr = conn.createArrayOf("bigint", ids.toArray());
                    delete.setArray(1, arr);
                    delete.executeUpdate();
                    arr.free();
                }
            }
        });
    }

    /** Runs {@code task} on {@code threads} threads at once and waits for all of them (a failure is rethrown). */
    static void inParallel(int threads, Callable<Void> task) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Void>> fs = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                fs.add(pool.submit(task));
            }
            for (Future<Void> f : fs) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }
    }

    static byte[] payload(byte[] pad, int seq) {
        byte[] b = Arrays.copyOf(pad, pad.length);
        ByteBuffer.wrap(b).putInt(0, seq);
        return b;
    }

    /**
     * The settle step before the drain and before the pickup phase, the same for every system (the Node
     * drivers do the same): VACUUM (ANALYZE) every table of the system's own schema, then CHECKPOINT, so no
     * figure depends on when autovacuum happened to run.
     */
    static void settle(PGSimpleDataSource ds, String schema) {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            List<String> tables = new ArrayList<>();
            try (ResultSet rs = s.executeQuery("SELECT format('%I.%I', schemaname, relname) FROM pg_stat_user_tables "
                    + "WHERE schemaname = '" + schema + "'")) {
                while (rs.next()) {
                    tables.add(rs.getString(1));
                }
            }
            for (String t : tables) {
                s.execute("VACUUM (ANALYZE) " + t);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("settle (VACUUM ANALYZE of " + schema + ") failed: " + e.getMessage(), e);
        }
        checkpoint(ds);
    }

    static void checkpoint(PGSimpleDataSource ds) {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("CHECKPOINT");
        } catch (SQLException e) {
            // not allowed for this role: measure anyway
        }
    }

    static String num(double v) {
        return Double.isNaN(v) ? "null" : Double.toString(Math.round(v * 10) / 10.0);
    }

    static void log(String line) {
        System.err.println("[" + java.time.Instant.now() + "] " + line);
    }

    static void parse(String[] args) {
        if (args.length < 1 || args[0].startsWith("--")) {
            throw new IllegalArgumentException("usage: RawBaseline.java JDBC_URL [--jobs N] [--enqueue-batch N] "
                    + "[--enqueue-callers N] [--workers N] [--fetch N] [--warmup-jobs N] [--schema S]");
        }
        url = args[0];
        for (int i = 1; i < args.length; i++) {
            String a = args[i];
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(a + " needs a value");
            }
            String v = args[++i];
            switch (a) {
                case "--jobs" -> jobs = Integer.parseInt(v);
                case "--enqueue-batch" -> enqueueBatch = Integer.parseInt(v);
                case "--enqueue-callers" -> enqueueCallers = Integer.parseInt(v);
                case "--workers" -> workers = Integer.parseInt(v);
                case "--fetch" -> fetch = Integer.parseInt(v);
                case "--schema" -> schema = v;
                case "--warmup-jobs" -> warmupJobs = Integer.parseInt(v);
                // accepted for a uniform command line; a reference has no pickup phase
                case "--latency-jobs", "--latency-rate", "--drain-timeout-s" -> { }
                default -> throw new IllegalArgumentException("unknown argument " + a);
            }
        }
    }
}
