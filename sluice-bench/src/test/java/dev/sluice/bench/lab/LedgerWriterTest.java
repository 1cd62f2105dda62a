package dev.sluice.bench.lab;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.bench.SharedServer;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The ledger writer's batching: rows nobody waits for linger to share a transaction, a waiting caller ends the
 * linger, and {@code close()} writes what lingers. Transactions are told apart by the rows' {@code xmin}.
 */
class LedgerWriterTest {
    private static final LedgerWriter.Table ROWS = LedgerWriter.table("ledger_writer_test", "label", "note");
    private static final LedgerWriter.Table OTHER = LedgerWriter.table("ledger_writer_other", "label");
    private static DataSource ds;

    @BeforeAll
    static void createTable() throws Exception {
        ds = SharedServer.get().dataSource();
        exec("CREATE SCHEMA " + Ledger.SCHEMA);
        exec("CREATE TABLE " + Ledger.SCHEMA + ".ledger_writer_test (label text NOT NULL, note text)");
        exec("CREATE TABLE " + Ledger.SCHEMA + ".ledger_writer_other (label text NOT NULL)");
    }

    @AfterAll
    static void dropSchema() throws Exception {
        exec("DROP SCHEMA " + Ledger.SCHEMA + " CASCADE");
    }

    @BeforeEach
    void empty() throws Exception {
        exec("TRUNCATE " + Ledger.SCHEMA + ".ledger_writer_test, " + Ledger.SCHEMA + ".ledger_writer_other");
    }

    @Test
    void rowsNobodyWaitsForShareATransactionUntilSomeoneWaits() throws Exception {
        try (LedgerWriter w = new LedgerWriter(ds::getConnection, Duration.ofSeconds(30), Duration.ofSeconds(60))) {
            w.append(ROWS, "a", "not waited");
            // Without the linger, "a" is written on its own within milliseconds; with it, it waits for company.
            Thread.sleep(300);
            w.append(ROWS, "b", "tab\there");
            long start = System.nanoTime();
            w.write(ROWS, "c", null);
            long waitedMs = (System.nanoTime() - start) / 1_000_000;
            assertThat(waitedMs).as("a caller that waits ends the 60 s linger").isLessThan(20_000);
            assertThat(labelsByTransaction()).containsExactly("a,b,c");
            assertThat(note("b")).isEqualTo("tab\there");
            assertThat(note("c")).isNull();
        }
    }

    @Test
    void aWaiterTakesItsOwnTableAlongAndLeavesTheOthersLingering() throws Exception {
        try (LedgerWriter w = new LedgerWriter(ds::getConnection, Duration.ofSeconds(30), Duration.ofSeconds(60))) {
            w.append(OTHER, "producer row");
            w.append(ROWS, "start", null);
            w.write(ROWS, "end", null);
            assertThat(labelsByTransaction()).as("the waited row's table, started row included").containsExactly("end,start");
            assertThat(count("ledger_writer_other")).as("another table's row keeps lingering").isZero();
            w.write(OTHER, "waited");
            assertThat(count("ledger_writer_other")).isEqualTo(2);
        }
    }

    @Test
    void rowsLeftLingeringAreWrittenWithinTheLinger() throws Exception {
        try (LedgerWriter w = new LedgerWriter(ds::getConnection, Duration.ofSeconds(30), Duration.ofMillis(200))) {
            w.append(OTHER, "lingering");
            w.write(ROWS, "waited", null);
            long start = System.nanoTime();
            while (count("ledger_writer_other") == 0) {
                assertThat((System.nanoTime() - start) / 1_000_000).as("written once its linger ran out").isLessThan(20_000);
                Thread.sleep(20);
            }
        }
    }

    @Test
    void closeWritesWhatLingers() throws Exception {
        long start = System.nanoTime();
        try (LedgerWriter w = new LedgerWriter(ds::getConnection, Duration.ofSeconds(30), Duration.ofSeconds(60))) {
            w.append(ROWS, "x", null);
            w.append(ROWS, "y", null);
        }
        assertThat((System.nanoTime() - start) / 1_000_000).as("close ends the linger").isLessThan(20_000);
        assertThat(labelsByTransaction()).containsExactly("x,y");
    }

    @Test
    void withoutLingerEachWaitedRowCommitsAtOnce() throws Exception {
        try (LedgerWriter w = new LedgerWriter(ds::getConnection, Duration.ofSeconds(30), Duration.ZERO)) {
            w.write(ROWS, "p", null);
            w.write(ROWS, "q", null);
        }
        assertThat(labelsByTransaction()).containsExactly("p", "q");
    }

    @Test
    void aRowCancelledWhileItLingersIsNeverWritten() throws Exception {
        try (LedgerWriter w = new LedgerWriter(ds::getConnection, Duration.ofSeconds(30), Duration.ofSeconds(60))) {
            LedgerWriter.Pending start = w.append(ROWS, "start", null);
            // A lingering batch's rows are taken only when it is written: the start row can still be dropped.
            assertThat(start.cancel()).isTrue();
            assertThat(start.written).isDone();
            w.write(ROWS, "end", null);
            assertThat(start.cancel()).as("cancelled once").isFalse();
        }
        assertThat(labelsByTransaction()).containsExactly("end");
    }

    @Test
    void badArgumentsAreRefused() throws Exception {
        org.assertj.core.api.Assertions.assertThatThrownBy(
                () -> new LedgerWriter(ds::getConnection, Duration.ofSeconds(1), Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("linger");
        try (LedgerWriter w = new LedgerWriter(ds::getConnection, Duration.ofSeconds(30), Duration.ZERO)) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> w.append(ROWS, "only one"))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("takes 2 values");
        }
    }

    /** The labels, grouped by the transaction that wrote them, in commit order. */
    private static List<String> labelsByTransaction() throws Exception {
        List<String> out = new ArrayList<>();
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT string_agg(label, ',' ORDER BY label) FROM " + Ledger.SCHEMA
                     + ".ledger_writer_test GROUP BY xmin::text::int8 ORDER BY xmin::text::int8")) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        }
        return out;
    }

    private static List<String> labels() throws Exception {
        List<String> out = new ArrayList<>();
        for (String t : labelsByTransaction()) {
            out.addAll(List.of(t.split(",")));
        }
        return out;
    }

    private static long count(String table) throws Exception {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*) FROM " + Ledger.SCHEMA + "." + table)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static String note(String label) throws Exception {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT note FROM " + Ledger.SCHEMA + ".ledger_writer_test WHERE label = '"
                     + label + "'")) {
            rs.next();
            return rs.getString(1);
        }
    }

    private static void exec(String sql) throws Exception {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
