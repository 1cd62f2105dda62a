package dev.sluice.bench;

import dev.sluice.ConsumeOptions;
import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.GroupConfig;
import dev.sluice.Outcome;
import dev.sluice.ProduceOptions;
import dev.sluice.Producer;
import dev.sluice.Stream;
import dev.sluice.StreamConfig;
import dev.sluice.StreamInfo;
import java.nio.ByteBuffer;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * One soak ({@link SoakBenchmark}): the fixed-rate producer, the consumer that measures each message's latency
 * from the produce time in its payload, the sampler that records a row per interval, and the pin.
 */
final class SoakRun {
    /** How often the producer's timer catches up with the rate. */
    private static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

    private final ScenarioRunner.Context c;
    private final SoakBenchmark.Options o;
    private final Object lock = new Object();
    // Guarded by lock: which ids committed and which were delivered, the latencies, the interval's counts.
    private final BitSet committed = new BitSet();
    private final BitSet delivered = new BitSet();
    private final LatencyHistogram whole = new LatencyHistogram();
    private final LatencyHistogram before = new LatencyHistogram();
    private final LatencyHistogram during = new LatencyHistogram();
    private final LatencyHistogram after = new LatencyHistogram();
    private LatencyHistogram interval = new LatencyHistogram();
    private long intervalCommitted;
    private long intervalDelivered;
    private long produced;
    private long deliveredCount;
    private long deliveredInWindow;
    private long redelivered;
    private long deliveredBefore;
    private long deliveredDuring;

    private final AtomicLong pending = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private final AtomicLong duplicates = new AtomicLong();
    private final AtomicReference<String> firstFailure = new AtomicReference<>();
    // The windows on the monotonic clock, fixed when producing starts.
    private long t0;
    private long producingEnd;
    private long beforeFrom;
    private long pinFrom;
    private long pinTo;
    private long afterFrom;
    private long afterTo;

    private SoakRun(ScenarioRunner.Context c, SoakBenchmark.Options o) {
        this.c = c;
        this.o = o;
    }

    static SoakBenchmark.Result measure(ScenarioRunner.Context c, SoakBenchmark.Options o) throws SQLException {
        return new SoakRun(c, o).run();
    }

    private SoakBenchmark.Result run() throws SQLException {
        Stream<byte[]> stream = c.sluice().stream("bench.soak");
        StreamInfo info = stream.register(StreamConfig.builder().partitionSize(o.partitionSize()).retention(o.retention())
                .idempotencyKeyTtl(o.retention()).deliveryLogRetention(o.retention()).build());
        ConsumerGroup<byte[]> group = stream.consumerGroup("soak");
        group.register(GroupConfig.defaults());
        SoakStorage storage = new SoakStorage(c.admin(), c.schema(), info.id());
        List<SoakBenchmark.Row> rows = new ArrayList<>();
        SoakBenchmark.Pin pin;
        double producingSeconds;
        try (Consumption consumption = group.consume(m -> {
            delivered(m.id(), ByteBuffer.wrap(m.payload()).getLong(0), System.nanoTime());
            return Outcome.success();
        }, ConsumeOptions.defaults()); Producer<byte[]> producer = stream.producer()) {
            ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "bench-soak-producer");
                t.setDaemon(true);
                return t;
            });
            startClock();
            AtomicLong sent = new AtomicLong();
            try {
                ticker.scheduleAtFixedRate(() -> produceDue(producer, sent), 0, TICK_NANOS, TimeUnit.NANOSECONDS);
                pin = sample(storage, rows);
            } finally {
                ticker.shutdownNow();
                awaitTermination(ticker);
            }
            producingSeconds = (System.nanoTime() - t0) / 1e9;
            waitUntil(() -> pending.get() == 0, TimeUnit.SECONDS.toNanos(30));
            c.listener().phase(1, "draining");
            waitUntil(this::drained, SoakBenchmark.DRAIN_LIMIT.toNanos());
        }
        synchronized (lock) {
            BitSet missing = (BitSet) committed.clone();
            missing.andNot(delivered);
            return new SoakBenchmark.Result(o, c.environment(), info.id(), rows, producingSeconds, produced,
                    deliveredCount, deliveredInWindow, missing.cardinality(), redelivered, failures.get(), duplicates.get(),
                    whole.quantileMs(0.50), whole.quantileMs(0.99), pin, firstFailure.get());
        }
    }

    private void startClock() {
        t0 = System.nanoTime();
        producingEnd = t0 + o.duration().toNanos();
        if (o.pinned()) {
            pinFrom = t0 + o.pinXminAt().toNanos();
            pinTo = pinFrom + o.pinXminFor().toNanos();
            beforeFrom = Math.max(t0, pinFrom - o.pinWindow().toNanos());
            afterFrom = pinTo + o.pinWindow().toNanos();
            afterTo = Math.min(producingEnd, afterFrom + o.pinWindow().toNanos());
        }
    }

    /** The sampler and the pin, on the benchmark's thread, until producing ends; returns the pin's figures. */
    private SoakBenchmark.Pin sample(SoakStorage storage, List<SoakBenchmark.Row> rows) throws SQLException {
        long every = o.sampleEvery().toNanos();
        long nextSample = t0 + every;
        long lastSample = t0;
        SnapshotPin open = null;
        String xmin = null;
        double heldSeconds = 0;
        boolean held = false;
        boolean pinDone = !o.pinned();
        try {
            while (true) {
                long now = System.nanoTime();
                if (!pinDone && open == null && now >= pinFrom) {
                    open = SnapshotPin.open(c.url(), Bench.quote(c.schema()) + ".stream_config");
                    xmin = open.xmin();
                    c.listener().phase(1, "vacuum horizon pinned at xmin " + xmin + " for " + o.pinXminFor().toSeconds() + " s");
                }
                if (open != null && now >= pinTo) {
                    held = open.heldAsSeenBy(c.admin());
                    open.close();
                    heldSeconds = open.heldSeconds();
                    open = null;
                    pinDone = true;
                    c.listener().phase(1, "pin released");
                }
                boolean last = now >= producingEnd;
                if (now >= nextSample || last) {
                    // A row is pinned when its interval overlapped the pin's (planned) time.
                    boolean pinned = o.pinned() && lastSample < pinTo && now > pinFrom;
                    SoakBenchmark.Row row = row(rows.size() + 1, now, lastSample, storage, pinned);
                    rows.add(row);
                    c.listener().finished(SoakBenchmark.runLine(row));
                    lastSample = now;
                    nextSample = Math.min(nextSample + every, producingEnd);
                    if (nextSample <= now) {
                        nextSample = now + every;
                    }
                    if (last) {
                        break;
                    }
                }
                long wake = Math.min(nextSample, producingEnd);
                if (!pinDone) {
                    wake = Math.min(wake, open == null ? pinFrom : pinTo);
                }
                LockSupport.parkNanos(Math.max(1, wake - System.nanoTime()));
            }
        } finally {
            if (open != null) {
                open.close();
            }
        }
        if (!o.pinned()) {
            return null;
        }
        synchronized (lock) {
            return new SoakBenchmark.Pin(xmin, heldSeconds, held, before.quantileMs(0.99), during.quantileMs(0.99),
                    after.quantileMs(0.99), deliveredBefore / ((pinFrom - beforeFrom) / 1e9),
                    deliveredDuring / ((pinTo - pinFrom) / 1e9));
        }
    }

    private SoakBenchmark.Row row(int n, long now, long since, SoakStorage storage, boolean pinned) throws SQLException {
        LatencyHistogram h;
        long committedNow;
        long deliveredNow;
        long backlog;
        synchronized (lock) {
            h = interval;
            interval = new LatencyHistogram();
            committedNow = intervalCommitted;
            deliveredNow = intervalDelivered;
            intervalCommitted = 0;
            intervalDelivered = 0;
            backlog = produced - deliveredCount;
        }
        double seconds = (now - since) / 1e9;
        SoakStorage.Reading r = storage.read();
        return new SoakBenchmark.Row(n, (now - t0) / 1e9, committedNow / seconds, deliveredNow / seconds,
                h.quantileMs(0.50), h.quantileMs(0.99), Math.max(0, backlog), r.streamBytes(), r.controlPlaneBytes(),
                r.partitions(), r.oldestId(), r.deadTuples(), pinned);
    }

    /** Produces what the rate owes by now (a timer tick that came late catches up). */
    private void produceDue(Producer<byte[]> producer, AtomicLong sent) {
        long now = System.nanoTime();
        long due = (long) ((Math.min(now, producingEnd) - t0) / 1e9 * o.rate());
        while (sent.get() < due) {
            long n = sent.incrementAndGet();
            byte[] payload = new byte[o.payloadBytes()];
            long at = System.nanoTime();
            ByteBuffer.wrap(payload).putLong(0, at);
            pending.incrementAndGet();
            producer.produceAsync(payload, ProduceOptions.idempotent("soak-" + n)).whenComplete((p, e) -> {
                if (e != null) {
                    failures.incrementAndGet();
                    firstFailure.compareAndSet(null, String.valueOf(e.getCause() != null ? e.getCause() : e));
                } else if (p.duplicate()) {
                    duplicates.incrementAndGet();
                } else {
                    synchronized (lock) {
                        committed.set(Math.toIntExact(p.id()));
                        produced++;
                        intervalCommitted++;
                    }
                }
                pending.decrementAndGet();
            });
        }
    }

    private void delivered(long id, long sentAt, long now) {
        long micros = (now - sentAt) / 1000;
        synchronized (lock) {
            int i = Math.toIntExact(id);
            if (delivered.get(i)) {
                redelivered++;
                return;
            }
            delivered.set(i);
            deliveredCount++;
            intervalDelivered++;
            interval.record(micros);
            whole.record(micros);
            if (now < producingEnd) {
                deliveredInWindow++;
            }
            if (o.pinned()) {
                if (sentAt >= beforeFrom && sentAt < pinFrom) {
                    before.record(micros);
                } else if (sentAt >= pinFrom && sentAt < pinTo) {
                    during.record(micros);
                } else if (sentAt >= afterFrom && sentAt < afterTo) {
                    after.record(micros);
                }
                if (now >= beforeFrom && now < pinFrom) {
                    deliveredBefore++;
                } else if (now >= pinFrom && now < pinTo) {
                    deliveredDuring++;
                }
            }
        }
    }

    private boolean drained() {
        synchronized (lock) {
            BitSet missing = (BitSet) committed.clone();
            missing.andNot(delivered);
            return missing.isEmpty();
        }
    }

    private static void awaitTermination(ScheduledExecutorService ticker) {
        try {
            ticker.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BenchmarkException("interrupted while stopping the producer", e);
        }
    }

    private static void waitUntil(java.util.function.BooleanSupplier done, long timeoutNanos) {
        long deadline = System.nanoTime() + timeoutNanos;
        while (!done.getAsBoolean() && System.nanoTime() < deadline) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
        }
    }
}
