package dev.sluice.bench.lab;

import java.io.IOException;
import java.io.StringReader;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyManager;

/**
 * A lab process's ledger writes, batched: every row goes into one bounded queue, and one flusher thread writes
 * whatever is queued in one transaction ({@code COPY … FROM STDIN} per table) as soon as the previous one committed,
 * so a process writes thousands of ledger rows a second in a few hundred transactions. Each row's future completes
 * when its transaction committed: a handler that must have its row durable before it returns (an end row before the
 * ack) waits for it; a start row does not wait, and a start row whose call ended before it was flushed is dropped
 * ({@link Pending#cancel}) because the end row carries the start time.
 *
 * <p>Rows nobody waits for linger up to the writer's {@code linger} to gather more rows into one transaction: a
 * producer's attempt and result rows then cost one {@code COPY} per table for many messages instead of one per
 * message (the ledger took a third of the server's statement time in hour-long runs). A row somebody waits for
 * ({@link #write}, {@link #await}) is flushed at once, with every queued row of its own table (they cost no
 * extra statement), while the rows of the other tables keep lingering: a handler's end row, written before its
 * ack, no longer drags the producers' rows into a transaction of their own every few milliseconds. A waiter is
 * seen within {@link #LINGER_STEP_NANOS}.
 *
 * <p>A flush that fails (a terminated backend, a restarting server) is retried on a new connection until it commits or
 * {@code giveUp} passes; a flush whose commit reply was lost may be written twice, so the checker counts calls and
 * attempts by their identity, never rows. Timestamps are the writing process's {@link Instant#now()}: every lab process
 * runs on one host, so the ledger, the orchestrator's faults and the kill instants share one clock.
 */
final class LedgerWriter implements AutoCloseable {

    /** A ledger table a writer appends to: its COPY statement is built once. */
    static final class Table {
        final String name;
        final int columns;
        final String copy;

        private Table(String name, String... columns) {
            this.name = name;
            this.columns = columns.length;
            this.copy = "COPY " + Ledger.SCHEMA + "." + name + " (" + String.join(", ", columns) + ") FROM STDIN";
        }
    }

    /** Declares a table and the columns rows give values for, in order. */
    static Table table(String name, String... columns) {
        return new Table(name, columns);
    }

    /** Opens a connection to the ledger's database. */
    interface Connect {
        Connection open() throws SQLException;
    }

    /** A queued row: its future completes when it committed, or exceptionally when the writer gave up. */
    static final class Pending {
        private static final int QUEUED = 0;
        private static final int TAKEN = 1;
        private static final int CANCELLED = 2;
        final Table table;
        final Object[] values;
        final CompletableFuture<Void> written = new CompletableFuture<>();
        /** Somebody waits for this row: it is flushed at once, with the queued rows of its table. */
        volatile boolean awaited;
        private final AtomicInteger state = new AtomicInteger(QUEUED);

        private Pending(Table table, Object[] values) {
            this.table = table;
            this.values = values;
        }

        /** Drops the row if the flusher has not taken it yet; true when it will never be written. */
        boolean cancel() {
            boolean cancelled = state.compareAndSet(QUEUED, CANCELLED);
            if (cancelled) {
                written.complete(null);
            }
            return cancelled;
        }

        boolean take() {
            return state.compareAndSet(QUEUED, TAKEN);
        }
    }

    private static final int CAPACITY = 200_000;
    private static final int MAX_BATCH = 5_000;
    /** How often a lingering flusher looks whether someone started waiting. */
    static final long LINGER_STEP_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private final Connect connect;
    private final long giveUpNanos;
    private final long lingerNanos;
    /** Callers blocked in {@link #await}: while any, the flusher looks for their rows. */
    private final AtomicInteger waiting = new AtomicInteger();
    private final BlockingQueue<Pending> queue = new ArrayBlockingQueue<>(CAPACITY);
    private final Thread flusher;
    private volatile boolean closing;
    private Connection connection;

    /**
     * @param giveUp how long a flush is retried before its rows fail
     * @param linger how long a flush waits for more rows while nobody waits for one ({@code 0}: never)
     */
    LedgerWriter(Connect connect, java.time.Duration giveUp, java.time.Duration linger) {
        if (linger.isNegative()) {
            throw new IllegalArgumentException("linger must not be negative: " + linger);
        }
        this.connect = connect;
        this.giveUpNanos = giveUp.toNanos();
        this.lingerNanos = linger.toNanos();
        this.flusher = new Thread(this::flushLoop, "lab-ledger-writer");
        flusher.setDaemon(true);
        flusher.start();
    }

    /** Queues a row (blocks while 200,000 rows wait: the ledger's back pressure). */
    Pending append(Table table, Object... values) {
        if (values.length != table.columns) {
            throw new IllegalArgumentException(table.name + " takes " + table.columns + " values, got " + values.length);
        }
        if (closing) {
            throw new IllegalStateException("the ledger writer is closed");
        }
        Pending p = new Pending(table, values);
        try {
            queue.put(p);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.written.completeExceptionally(e);
        }
        return p;
    }

    /** Queues a row and waits until it committed. */
    void write(Table table, Object... values) {
        await(append(table, values));
    }

    /** Waits until the row committed (or the writer gave up: then throws); the flusher stops lingering meanwhile. */
    void await(Pending p) {
        p.awaited = true;
        waiting.incrementAndGet();
        try {
            p.written.join();
        } finally {
            waiting.decrementAndGet();
        }
    }

    private void flushLoop() {
        List<Pending> carried = new ArrayList<>(); // queued rows not written yet, oldest first
        long oldest = 0; // when the oldest carried row was taken from the queue
        while (true) {
            try {
                if (carried.isEmpty()) {
                    Pending first = queue.poll(50, TimeUnit.MILLISECONDS);
                    if (first == null) {
                        if (closing && queue.isEmpty()) {
                            return;
                        }
                        continue;
                    }
                    carried.add(first);
                    oldest = System.nanoTime();
                }
                queue.drainTo(carried, MAX_BATCH - carried.size());
                carried.removeIf(p -> p.state.get() == Pending.CANCELLED);
                if (carried.isEmpty()) {
                    continue;
                }
                List<Pending> batch;
                if (closing || carried.size() >= MAX_BATCH || System.nanoTime() - oldest >= lingerNanos) {
                    batch = carried;
                    carried = new ArrayList<>();
                } else {
                    batch = waitedTables(carried);
                    if (batch.isEmpty()) {
                        Pending p = queue.poll(LINGER_STEP_NANOS, TimeUnit.NANOSECONDS);
                        if (p != null) {
                            carried.add(p);
                        }
                        continue;
                    }
                    // What stays keeps the linger of the oldest row seen (a bound, never an extension).
                }
                batch.removeIf(p -> !p.take());
                if (!batch.isEmpty()) {
                    flush(batch);
                }
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /**
     * Takes out of {@code carried} the rows of every table that has a row somebody waits for (none while nobody
     * waits); the rest stays, in order.
     */
    private List<Pending> waitedTables(List<Pending> carried) {
        List<Pending> out = new ArrayList<>();
        if (waiting.get() == 0) {
            return out;
        }
        java.util.Set<Table> tables = new java.util.HashSet<>();
        for (Pending p : carried) {
            if (p.awaited) {
                tables.add(p.table);
            }
        }
        if (tables.isEmpty()) {
            return out;
        }
        for (java.util.Iterator<Pending> it = carried.iterator(); it.hasNext(); ) {
            Pending p = it.next();
            if (tables.contains(p.table)) {
                out.add(p);
                it.remove();
            }
        }
        return out;
    }

    private void flush(List<Pending> batch) throws InterruptedException {
        Map<Table, StringBuilder> rows = new LinkedHashMap<>();
        for (Pending p : batch) {
            StringBuilder sb = rows.computeIfAbsent(p.table, t -> new StringBuilder(batch.size() * 64));
            for (int i = 0; i < p.values.length; i++) {
                if (i > 0) {
                    sb.append('\t');
                }
                appendValue(sb, p.values[i]);
            }
            sb.append('\n');
        }
        long start = System.nanoTime();
        for (int attempt = 0; ; attempt++) {
            try {
                if (connection == null) {
                    connection = connect.open();
                    connection.setAutoCommit(false);
                }
                CopyManager copy = connection.unwrap(PGConnection.class).getCopyAPI();
                for (Map.Entry<Table, StringBuilder> e : rows.entrySet()) {
                    copy.copyIn(e.getKey().copy, new StringReader(e.getValue().toString()));
                }
                connection.commit();
                batch.forEach(p -> p.written.complete(null));
                return;
            } catch (SQLException | IOException | RuntimeException e) {
                closeQuietly();
                if (System.nanoTime() - start > giveUpNanos) {
                    IllegalStateException gaveUp = new IllegalStateException("ledger unavailable for "
                            + TimeUnit.NANOSECONDS.toSeconds(giveUpNanos) + " s", e);
                    batch.forEach(p -> p.written.completeExceptionally(gaveUp));
                    return;
                }
                TimeUnit.MILLISECONDS.sleep(attempt < 10 ? 5 : 100);
            }
        }
    }

    /** COPY text format: {@code \N} for null; backslash, tab, newline and carriage return escaped; NUL replaced. */
    static void appendValue(StringBuilder sb, Object v) {
        if (v == null) {
            sb.append("\\N");
            return;
        }
        String s = v.toString();
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            switch (ch) {
                case '\\' -> sb.append("\\\\");
                case '\t' -> sb.append("\\t");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\0' -> sb.append('\uFFFD');
                default -> sb.append(ch);
            }
        }
    }

    private void closeQuietly() {
        if (connection != null) {
            try {
                connection.close();
            } catch (SQLException ignored) {
                // already broken
            }
            connection = null;
        }
    }

    /** Writes everything queued (waiting up to the give-up time), then closes the connection. */
    @Override
    public void close() {
        closing = true;
        try {
            flusher.join(TimeUnit.NANOSECONDS.toMillis(giveUpNanos) + 5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        flusher.interrupt();
        closeQuietly();
    }
}
