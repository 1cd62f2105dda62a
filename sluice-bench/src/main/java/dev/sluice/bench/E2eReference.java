package dev.sluice.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;

/**
 * The reference of {@link E2eBenchmark}: {@code raw-insert} (batched {@code INSERT ... SELECT * FROM
 * unnest(...)} with the mean rows per transaction ours reached) into an unpartitioned table with the
 * log's columns, concurrently with G {@code raw-range-read} readers, each looping {@code SELECT ... WHERE
 * id > cursor ORDER BY id LIMIT B} and the {@code UPDATE} of its cursor row in one transaction.
 */
final class E2eReference {
    /**
     * How long a caught-up reference reader waits before it looks again. Chosen as the fastest of the
     * settings tried on the 2-core machine (docs/benchmarks.md): polling tighter steals CPU from the
     * inserters, longer only adds latency.
     */
    private static final long READER_IDLE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private E2eReference() {
    }

    static E2eBenchmark.Side measure(DataSource ds, Connection admin, String schema, int run, double meanBatch, int inserters,
                           E2eBenchmark.Options o) throws SQLException {
        if (!(meanBatch >= 1)) {
            throw new BenchmarkException("mean batch size " + meanBatch + " of run " + run + " is below 1");
        }
        String table = Bench.quote(schema) + ".raw_" + o.scenario() + "_" + run;
        String cursors = Bench.quote(schema) + ".raw_" + o.scenario() + "_cursor_" + run;
        Bench.execute(admin, "CREATE TABLE " + table + " (" + Bench.LOG_COLUMNS + ")");
        Bench.execute(admin, "CREATE TABLE " + cursors + " (reader int PRIMARY KEY, position bigint NOT NULL)");
        Bench.execute(admin, "INSERT INTO " + cursors + " SELECT g, 0 FROM generate_series(1, " + o.groups() + ") g");
        Bench.checkpoint(admin);

        String insert = "INSERT INTO " + table + " (schema_version, content_type, payload) "
                + "SELECT * FROM unnest(?::int[], ?::text[], ?::bytea[])";
        // The columns our consumer fetches for every message (SELECT list of the claim's fetch, minus the
        // compaction join that is a Sluice feature).
        String select = "SELECT id, created_at, schema_version, content_type, routing_key, message_key, compaction_rank,"
                + " headers::text, options::text, payload FROM " + table + " WHERE id > ? ORDER BY id LIMIT ?";
        String advance = "UPDATE " + cursors + " SET position = ? WHERE reader = ?";
        int low = (int) Math.floor(meanBatch);
        AtomicLong inserted = new AtomicLong();
        AtomicLong[] read = new AtomicLong[o.groups()];
        BitSet[] seen = new BitSet[o.groups()];
        for (int g = 0; g < o.groups(); g++) {
            read[g] = new AtomicLong();
            seen[g] = new BitSet();
        }
        long[] transactions = new long[inserters];
        long[] windowRows = new long[inserters];
        long start = System.nanoTime();
        Phase phase = Phase.start(o.warmup(), o.duration());
        long windowStart = start + o.warmup().toNanos();
        long windowEnd = windowStart + o.duration().toNanos();
        List<Sampler.Sample> window;
        try (Sampler sampler = Sampler.start(start, E2eBenchmark.SAMPLE_PERIOD, () -> {
            long[] v = new long[o.groups() + 1];
            v[0] = inserted.get();
            for (int g = 0; g < o.groups(); g++) {
                v[g + 1] = read[g].get();
            }
            return v;
        })) {
            phase.run(inserters + o.groups(), "bench-raw-" + o.scenario() + "-", i -> {
                try (Connection c = ds.getConnection()) {
                    c.setAutoCommit(false);
                    if (i < inserters) {
                        insertLoop(c, insert, phase, low, meanBatch, o.payloadBytes(), inserted, transactions, windowRows, i);
                    } else {
                        int g = i - inserters;
                        readLoop(c, select, advance, phase, g, o.consumeBatch(), read[g], seen[g]);
                    }
                }
            });
            sampler.awaitSampleAfter(windowEnd);
            window = sampler.between(windowStart, windowEnd, E2eBenchmark.SAMPLE_PERIOD);
        }
        long rows = Bench.queryLong(admin, "SELECT count(*) FROM " + table);
        if (rows != inserted.get()) {
            throw new BenchmarkException("the reference table holds " + rows + " rows but " + inserted.get()
                    + " were committed");
        }
        // Rows a reader stepped over: ids below its final position that it never returned (a late
        // commit below the cursor). A fenced reader would not lose them, and would be slower; they are
        // reported, and the read rate counts them as read (cursor position), which favours the reference.
        long skipped = 0;
        for (int g = 0; g < o.groups(); g++) {
            long position = Bench.queryLong(admin, "SELECT position FROM " + cursors + " WHERE reader = " + (g + 1));
            try (PreparedStatement ps = admin.prepareStatement("SELECT id FROM " + table + " WHERE id <= ?")) {
                ps.setLong(1, position);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        if (!seen[g].get(Math.toIntExact(rs.getLong(1)))) {
                            skipped++;
                        }
                    }
                }
            }
        }
        Bench.execute(admin, "DROP TABLE " + table + ", " + cursors);
        long tx = Arrays.stream(transactions).sum();
        long wr = Arrays.stream(windowRows).sum();
        if (tx == 0) {
            throw new BenchmarkException("the reference committed nothing inside the measured window of run " + run);
        }
        double[] f = E2eBenchmark.figures(window, o.groups());
        return new E2eBenchmark.Side(f[0], f[1], f[2], f[3], (double) wr / tx, Double.NaN, inserted.get(), skipped, 0, true, null);
    }

    /**
     * One raw-insert connection: a prepared multi-row insert and a commit, looping; transactions carry
     * ⌊meanBatch⌋ or ⌈meanBatch⌉ rows so that their mean matches ours (see ProduceBenchmark).
     */
    private static void insertLoop(Connection c, String insert, Phase phase, int low, double meanBatch, int payloadBytes,
                                   AtomicLong inserted, long[] transactions, long[] windowRows, int i) throws SQLException {
        Object[][] rows = {columns(low, payloadBytes), columns(low + 1, payloadBytes)};
        try (PreparedStatement ps = c.prepareStatement(insert)) {
            long k = 0;
            while (phase.running()) {
                k++;
                long size = (long) Math.floor(k * meanBatch) - (long) Math.floor((k - 1) * meanBatch);
                Object[] r = rows[size > low ? 1 : 0];
                // Arrays are built per transaction, as they would be for rows that differ each time.
                ps.setArray(1, c.createArrayOf("int4", (Object[]) r[0]));
                ps.setArray(2, c.createArrayOf("text", (Object[]) r[1]));
                ps.setArray(3, c.createArrayOf("bytea", (Object[]) r[2]));
                int n = ps.executeUpdate();
                c.commit();
                inserted.addAndGet(n);
                if (phase.measured(System.nanoTime())) {
                    transactions[i]++;
                    windowRows[i] += n;
                }
            }
        }
    }

    private static Object[] columns(int n, int payloadBytes) {
        Integer[] versions = new Integer[n];
        String[] types = new String[n];
        byte[][] payloads = new byte[n][];
        Arrays.fill(versions, Bench.SCHEMA_VERSION);
        Arrays.fill(types, Bench.CONTENT_TYPE);
        for (int k = 0; k < n; k++) {
            payloads[k] = Bench.randomBytes(payloadBytes);
        }
        return new Object[] {versions, types, payloads};
    }

    /**
     * One raw-range-read connection: read the next rows above the cursor, then advance the cursor row in
     * the same transaction (at-least-once for a single reader). A caught-up reader waits briefly.
     */
    private static void readLoop(Connection c, String select, String advance, Phase phase, int g, int limit,
                                 AtomicLong read, BitSet seen) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(select); PreparedStatement up = c.prepareStatement(advance)) {
            long position = 0;
            while (phase.running()) {
                ps.setLong(1, position);
                ps.setInt(2, limit);
                int n = 0;
                long last = position;
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        // Read every column, as a consumer decoding the message would.
                        last = rs.getLong(1);
                        rs.getTimestamp(2);
                        rs.getInt(3);
                        rs.getString(4);
                        rs.getString(5);
                        rs.getString(6);
                        rs.getLong(7);
                        rs.getString(8);
                        rs.getString(9);
                        rs.getBytes(10);
                        seen.set(Math.toIntExact(last));
                        n++;
                    }
                }
                if (n == 0) {
                    c.commit(); // ends the read-only transaction; no xid, no WAL flush
                    LockSupport.parkNanos(READER_IDLE_NANOS);
                    continue;
                }
                up.setLong(1, last);
                up.setInt(2, g + 1);
                up.executeUpdate();
                c.commit();
                position = last;
                // Ids of the fresh table are dense from 1 (bigserial, no rollbacks), so the position is the
                // number of rows passed. Counted by cursor position, not by rows returned: ids the reader stepped over count as
                // read, so its occasional skips (see referenceSkipped) never make the reference look slower.
                read.set(position);
            }
        }
    }
}
