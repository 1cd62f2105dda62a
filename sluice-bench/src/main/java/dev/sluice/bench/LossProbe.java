package dev.sluice.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.ConsumeOptions;
import dev.sluice.Consumption;
import dev.sluice.Outcome;
import dev.sluice.ProduceOptions;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.embedded.EmbeddedPostgresServer;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.BitSet;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * A load probe for the snapshot fence: 8 callers produce as fast as the batcher allows for 8 s while
 * one consumer group consumes; afterwards every committed id must have been delivered. On a miss it
 * prints the missing rows with the xid of the transaction that wrote them and the group's cursor, and
 * exits 1. It reproduced the loss fixed by reading the head with {@code pg_sequence_last_value}.
 *
 * <pre>java -cp sluice-cli/target/sluice.jar dev.sluice.bench.LossProbe</pre>
 */
public final class LossProbe {
    private LossProbe() {
    }

    public static void main(String[] args) throws Exception {
        try (EmbeddedPostgresServer pg = EmbeddedPostgresServer.startTemporary()) {
            HikariConfig hc = new HikariConfig();
            hc.setJdbcUrl(pg.jdbcUrl());
            hc.setMaximumPoolSize(20);
            try (HikariDataSource pool = new HikariDataSource(hc);
                 Sluice sluice = Sluice.builder().dataSource(pool).schema("probe").build()) {
                long sid = sluice.stream("load").register().id();
                sluice.stream("load").consumerGroup("g").register();
                BitSet produced = new BitSet();
                BitSet received = new BitSet();
                Consumption c = sluice.stream("load").consumerGroup("g").consume(m -> {
                    synchronized (received) {
                        received.set(Math.toIntExact(m.id()));
                    }
                    return Outcome.success();
                }, ConsumeOptions.defaults().withBatchSize(256).withConcurrency(8));
                Producer<byte[]> p = sluice.stream("load").producer();
                Thread[] callers = new Thread[8];
                long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(8);
                for (int i = 0; i < callers.length; i++) {
                    callers[i] = new Thread(() -> {
                        Semaphore permits = new Semaphore(4);
                        byte[] payload = new byte[1024];
                        while (System.nanoTime() < end) {
                            permits.acquireUninterruptibly();
                            p.produceAsync(payload, ProduceOptions.NONE).whenComplete((r, e) -> {
                                if (r != null) {
                                    synchronized (produced) {
                                        produced.set(Math.toIntExact(r.id()));
                                    }
                                }
                                permits.release();
                            });
                        }
                        permits.acquireUninterruptibly(4);
                    });
                    callers[i].start();
                }
                for (Thread t : callers) {
                    t.join();
                }
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                BitSet missing;
                do {
                    Thread.sleep(200);
                    synchronized (produced) {
                        missing = (BitSet) produced.clone();
                    }
                    synchronized (received) {
                        missing.andNot(received);
                    }
                } while (!missing.isEmpty() && System.nanoTime() < deadline);
                c.close();
                System.out.println("produced " + produced.cardinality() + ", missing " + missing.cardinality());
                if (missing.isEmpty()) {
                    return;
                }
                int first = missing.nextSetBit(0);
                try (Connection conn = pool.getConnection(); Statement s = conn.createStatement()) {
                    try (ResultSet rs = s.executeQuery("SELECT id, xmin FROM probe.message_log_" + sid
                            + " WHERE id BETWEEN " + (first - 10) + " AND " + (first + 20) + " ORDER BY id")) {
                        while (rs.next()) {
                            System.out.println("row " + rs.getLong(1) + " written by xid " + rs.getString(2)
                                    + (missing.get(rs.getInt(1)) ? "  MISSING" : ""));
                        }
                    }
                    try (ResultSet rs = s.executeQuery("SELECT claimed, committed, settled_head FROM probe.consumer_group_cursor_" + sid
                            + " ORDER BY seq DESC LIMIT 1")) {
                        rs.next();
                        System.out.println("cursor claimed=" + rs.getLong(1) + " committed=" + rs.getLong(2) + " settled=" + rs.getLong(3));
                    }
                }
                System.exit(1);
            }
        }
    }
}
