package dev.sluice.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.ConsumeOptions;
import dev.sluice.Consumption;
import dev.sluice.Outcome;
import dev.sluice.Sluice;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.function.LongConsumer;
import javax.sql.DataSource;

/**
 * One member of {@link RebalanceBenchmark}'s partitioned group: a {@link Sluice} client of its own (own pool,
 * runtime and fleet instance, client id {@code name}) consuming the group with a no-op handler.
 *
 * <p>{@link #kill()} is a crash, not a close: the member's pool is shut first, which aborts every connection it
 * holds and refuses new ones, so no renewal, no outcome and no release can reach the database any more; its
 * handlers stop seeing messages (a handler called after the kill parks and counts nothing). Only then is the
 * client closed, in the background, to stop its threads; whatever its close tries to write fails on the closed
 * pool. Its shard leases stay in {@code shard_lease} until they expire, as after a SIGKILL.
 */
final class RebalanceMember {
    final String name;
    private final HikariDataSource pool;
    private final Sluice sluice;
    private final Consumption consumption;
    private final CountDownLatch stopped = new CountDownLatch(1);
    private volatile boolean killed;

    private RebalanceMember(String name, HikariDataSource pool, Sluice sluice, Consumption consumption) {
        this.name = name;
        this.pool = pool;
        this.sluice = sluice;
        this.consumption = consumption;
    }

    /** Starts a member consuming {@code group} of {@code stream}; {@code delivered} sees every id its handlers get. */
    static RebalanceMember start(DataSource ds, String schema, String name, Duration lease, String stream, String group,
                                 ConsumeOptions options, KeyOrder order, LongConsumer delivered) {
        HikariDataSource pool = Bench.pool(ds, options.concurrency() + 4, name);
        Sluice sluice = null;
        try {
            sluice = Sluice.builder().dataSource(pool).schema(schema).clientId(name).fleetLease(lease).maintenance(false)
                    .build();
            RebalanceMember[] self = new RebalanceMember[1];
            CountDownLatch ready = new CountDownLatch(1);
            Consumption c = sluice.stream(stream).consumerGroup(group).consume(m -> {
                ready.await();
                RebalanceMember me = self[0];
                if (me.killed) {
                    me.stopped.await(); // a dead process runs nothing: park until the client is torn down
                    throw new IllegalStateException("killed");
                }
                order.started(m);
                delivered.accept(m.id());
                order.finished(m);
                return Outcome.success();
            }, options);
            self[0] = new RebalanceMember(name, pool, sluice, c);
            ready.countDown();
            return self[0];
        } catch (RuntimeException e) {
            if (sluice != null) {
                sluice.close();
            }
            pool.close();
            throw e;
        }
    }

    /** Crashes the member (see the class comment); returns at once, the client's threads are stopped in the background. */
    void kill() {
        killed = true;
        pool.close(); // aborts the connections in use, refuses new ones: nothing more reaches the database
        Thread t = new Thread(() -> {
            stopped.countDown();
            try {
                sluice.close();
            } catch (RuntimeException e) {
                // expected: every write of the close fails on the closed pool
            }
        }, "bench-rebalance-teardown-" + name);
        t.setDaemon(true);
        t.start();
    }

    boolean killed() {
        return killed;
    }

    /** A clean stop (outcomes recorded, buckets released). */
    void close() {
        if (killed) {
            return;
        }
        try {
            consumption.close();
        } finally {
            try {
                sluice.close();
            } finally {
                pool.close();
            }
        }
    }
}
