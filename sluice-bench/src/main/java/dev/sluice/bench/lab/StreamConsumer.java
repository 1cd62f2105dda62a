package dev.sluice.bench.lab;

import dev.sluice.ConsumeOptions;
import dev.sluice.Consumption;
import dev.sluice.Message;
import dev.sluice.Outcome;
import dev.sluice.Sluice;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A lab consumer process's stream part: consumes every lab group and records every handler call in the ledger. The
 * call's start row is queued without waiting (dropped if the call ends first); its end row is durable before the
 * handler returns, so an acknowledged delivery always has its row, and a delivery whose process was killed has at
 * most a start row.
 *
 * <p>Which first attempts fail, fail for good or hang past the lease is decided by a hash of the message's tag and the
 * group, the same in every process; at most {@value #HANGS_PER_GROUP} handler of a group hangs at once in a process,
 * so the rest keep the group moving at the run's rate (a hang holds its whole batch in a partitioned group's bucket,
 * and its key's successors in the ordered one).
 */
final class StreamConsumer {
    private static final int HANGS_PER_GROUP = 1;
    private final String instance;
    private final LedgerWriter ledger;
    private final double failureRate;
    private final double hangRate;
    private final long leaseMs;
    private final AtomicLong calls = new AtomicLong();

    StreamConsumer(String instance, LedgerWriter ledger, double failureRate, double hangRate, long leaseMs) {
        this.instance = instance;
        this.ledger = ledger;
        this.failureRate = failureRate;
        this.hangRate = hangRate;
        this.leaseMs = leaseMs;
    }

    /** Starts consuming every group; the returned consumptions stop it. */
    List<Consumption> start(Sluice sluice) {
        ConsumeOptions options = ConsumeOptions.defaults().withLeaseTimeout(Duration.ofMillis(leaseMs))
                .withPollInterval(Duration.ofMillis(200)).withIdleCheck(Duration.ofSeconds(2)).withBatchSize(50)
                // Every call waits for its end row's ledger flush (a few ms): 16 handlers per group keep the rate.
                .withConcurrency(16).withShutdownTimeout(Duration.ofSeconds(5));
        List<Consumption> running = new ArrayList<>();
        for (String group : LabGroups.ALL) {
            Semaphore hangs = new Semaphore(HANGS_PER_GROUP);
            running.add(sluice.stream(Ledger.STREAM, String.class).consumerGroup(group)
                    .consume(m -> handle(group, hangs, m), options));
        }
        return running;
    }

    private Outcome handle(String group, Semaphore hangs, Message<String> m) throws Exception {
        String tag = tagOf(m.payload());
        long callNo = calls.incrementAndGet();
        Instant started = Instant.now();
        LedgerWriter.Pending start = ledger.append(Ledger.HANDLER_CALL, group, instance, callNo, m.id(), tag, m.attempt(),
                started, null, null);
        int bucket = Math.floorMod((tag + "/" + group).hashCode(), 10_000);
        if (m.attempt() == 1 && bucket < hangRate * 10_000 && hangs.tryAcquire()) {
            try {
                Thread.sleep(2 * leaseMs); // hangs past the lease: renewal must keep it, nothing redelivered meanwhile
            } finally {
                hangs.release();
            }
        }
        if (bucket >= 9_990 - failureRate * 100) {
            end(start, group, callNo, m, tag, started, "terminal");
            return Outcome.terminal("lab: permanent failure");
        }
        if (m.attempt() == 1 && bucket >= 5_000 && bucket < 5_000 + failureRate * 10_000) {
            end(start, group, callNo, m, tag, started, "failed");
            throw new IllegalStateException("lab: transient failure");
        }
        end(start, group, callNo, m, tag, started, "success");
        return Outcome.success();
    }

    /** Writes the call's end row and waits until it committed (a failure to write fails the delivery: it is retried). */
    private void end(LedgerWriter.Pending start, String group, long callNo, Message<String> m, String tag, Instant started,
                     String outcome) {
        start.cancel();
        ledger.write(Ledger.HANDLER_CALL, group, instance, callNo, m.id(), tag, m.attempt(), started, Instant.now(), outcome);
    }

    static String tagOf(String payload) {
        int i = payload.indexOf("\"tag\"");
        if (i < 0) {
            return null;
        }
        int from = payload.indexOf('"', payload.indexOf(':', i + 5)) + 1;
        return payload.substring(from, payload.indexOf('"', from));
    }
}
