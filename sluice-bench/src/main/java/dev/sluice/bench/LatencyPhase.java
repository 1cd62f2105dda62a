package dev.sluice.bench;

import dev.sluice.ConsumeOptions;
import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.GroupConfig;
import dev.sluice.Outcome;
import dev.sluice.ProduceOptions;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.Stream;
import dev.sluice.StreamConfig;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * One mode of {@link LatencyBenchmark} on a fresh stream: a fixed-rate producer, one consumer, and the
 * produce-commit → handler-start latency of every message committed in the window. With a pin
 * ({@link LatencyBenchmark.Options#pinXminFor()}, wake-ups mode only) the same producer and consumer go
 * on after the window: once every message of the window reached a handler, an {@link XidPin} holds the
 * server's xmin for the pin's duration, and the messages committed while it was held are measured too
 * (docs/benchmarks.md, "Pinned xmin").
 */
final class LatencyPhase {
    /** How long after the pin's rollback a message committed under the pin may reach a handler and still count. */
    static final Duration PIN_GRACE = Duration.ofSeconds(5);
    /** The upper bound on waiting for the window's messages before the pin is taken (normally milliseconds). */
    private static final Duration SETTLE_LIMIT = Duration.ofSeconds(10);

    /**
     * The figures of one mode.
     *
     * @param window the window's latencies
     * @param pinned the latencies of the messages committed while the pin was held (null without a pin)
     * @param pin    the pin (null without one)
     */
    record Measured(LatencyBenchmark.Latencies window, LatencyBenchmark.Latencies pinned, LatencyBenchmark.Pin pin) {
    }

    private final Sluice sluice;
    private final Connection admin;
    private final String url;
    private final LatencyBenchmark.Options o;
    private final ScenarioListener listener;
    // id -> nanoTime: when the produce future completed (the commit), when the handler started.
    private final Map<Long, Long> committedAt = new ConcurrentHashMap<>();
    private final Map<Long, Long> startedAt = new ConcurrentHashMap<>();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final AtomicLong pending = new AtomicLong();

    private LatencyPhase(Sluice sluice, Connection admin, String url, LatencyBenchmark.Options o, ScenarioListener listener) {
        this.sluice = sluice;
        this.admin = admin;
        this.url = url;
        this.o = o;
        this.listener = listener;
    }

    /** Measures one mode; {@code pinned} adds the pinned part after the window. */
    static Measured measure(Sluice sluice, Connection admin, String url, int run, boolean wakeups, boolean pinned,
                            LatencyBenchmark.Options o, ScenarioListener listener) throws SQLException {
        return new LatencyPhase(sluice, admin, url, o, listener).run(run, wakeups, pinned);
    }

    private Measured run(int run, boolean wakeups, boolean pinned) throws SQLException {
        Stream<byte[]> stream = sluice.stream("bench.latency-" + run + (wakeups ? "-wakeups" : "-poll"));
        stream.register(StreamConfig.defaults());
        ConsumerGroup<byte[]> group = stream.consumerGroup("g");
        group.register(GroupConfig.defaults());
        Bench.checkpoint(admin);

        byte[] payload = Bench.randomBytes(o.payloadBytes());
        ConsumeOptions options = ConsumeOptions.defaults().withWakeups(wakeups).withPollInterval(o.pollInterval());
        long windowStart;
        long windowEnd;
        PinWindow pin = null;
        try (Consumption consumption = group.consume(m -> {
            startedAt.putIfAbsent(m.id(), System.nanoTime());
            return Outcome.success();
        }, options); Producer<byte[]> producer = stream.producer()) {
            ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "bench-latency-producer");
                t.setDaemon(true);
                return t;
            });
            long start = System.nanoTime();
            windowStart = start + o.warmup().toNanos();
            windowEnd = windowStart + o.duration().toNanos();
            try {
                // A fixed rate, independent of how long commits take: produceAsync does not wait.
                ticker.scheduleAtFixedRate(() -> produce(producer, payload), 0, 1_000_000_000L / o.rate(),
                        TimeUnit.NANOSECONDS);
                parkUntil(windowEnd);
                if (pinned) {
                    pin = holdPin(run, windowStart, windowEnd);
                }
            } finally {
                ticker.shutdownNow();
            }
            // Let the last produces commit, then give the consumer time to hand every message to a handler.
            waitUntil(() -> pending.get() == 0, TimeUnit.SECONDS.toNanos(30));
            if (pin != null) {
                awaitStarted(pin.from(), pin.to(), pin.graceEnd());
            } else {
                long drainNanos = 3 * o.pollInterval().toNanos() + TimeUnit.SECONDS.toNanos(10);
                waitUntil(() -> startedAt.keySet().containsAll(committedAt.keySet()), drainNanos);
            }
        }
        stream.destroy(true);
        if (failure.get() != null) {
            throw new BenchmarkException("a produce failed: " + failure.get(), failure.get());
        }
        LatencyBenchmark.Latencies window = latencies(windowStart, windowEnd, Long.MAX_VALUE);
        if (window.messages() == window.lost()) {
            throw new BenchmarkException("no message was produced and delivered inside the window (" + (wakeups
                    ? "wake-ups" : "poll-only") + ")");
        }
        if (pin == null) {
            return new Measured(window, null, null);
        }
        return new Measured(window, latencies(pin.from(), pin.to(), pin.graceEnd()), pin.facts());
    }

    /** The pin's window on the monotonic clock, and what it did. */
    private record PinWindow(long from, long to, long graceEnd, LatencyBenchmark.Pin facts) {
    }

    /**
     * After the window: waits until its messages reached a handler (so that none of them is caught by the
     * pin), then holds the pin for its duration while the producer goes on. Returns with the pin rolled
     * back, on failure too.
     */
    private PinWindow holdPin(int run, long windowStart, long windowEnd) throws SQLException {
        awaitStarted(windowStart, windowEnd, System.nanoTime() + SETTLE_LIMIT.toNanos());
        try (XidPin pin = XidPin.open(url, LatencyBenchmark.PIN_APPLICATION_NAME)) {
            long from = System.nanoTime();
            listener.phase(run, "wake-ups, xmin pinned by xid " + pin.xid() + " for " + o.pinXminFor().toMillis() / 1000.0
                    + " s");
            parkUntil(from + o.pinXminFor().toNanos());
            boolean held = pin.heldAsSeenBy(admin);
            pin.close();
            long to = System.nanoTime();
            return new PinWindow(from, to, to + PIN_GRACE.toNanos(), new LatencyBenchmark.Pin(pin.xid(), pin.heldSeconds(), held));
        }
    }

    private void produce(Producer<byte[]> producer, byte[] payload) {
        pending.incrementAndGet();
        producer.produceAsync(payload, ProduceOptions.NONE).whenComplete((p, e) -> {
            long now = System.nanoTime();
            if (e != null) {
                failure.compareAndSet(null, e);
            } else {
                committedAt.put(p.id(), now);
            }
            pending.decrementAndGet();
        });
    }

    /**
     * Waits until every message committed in {@code [from, to)} so far reached a handler, or until
     * {@code deadline}. The ids are collected once and checked off, so that waiting costs the consumer
     * no CPU worth measuring.
     */
    private void awaitStarted(long from, long to, long deadline) {
        List<Long> waiting = new ArrayList<>();
        committedAt.forEach((id, committed) -> {
            if (committed >= from && committed < to) {
                waiting.add(id);
            }
        });
        waiting.removeIf(startedAt::containsKey);
        while (!waiting.isEmpty() && System.nanoTime() < deadline) {
            LockSupport.parkNanos(Math.min(TimeUnit.MILLISECONDS.toNanos(10), Math.max(1, deadline - System.nanoTime())));
            waiting.removeIf(startedAt::containsKey);
        }
    }

    /**
     * The latencies of the messages committed in {@code [from, to)}; one whose handler had not started by
     * {@code deadline} is lost (no latency).
     */
    private LatencyBenchmark.Latencies latencies(long from, long to, long deadline) {
        List<Double> ms = new ArrayList<>();
        long early = 0;
        long lost = 0;
        for (Map.Entry<Long, Long> e : committedAt.entrySet()) {
            long committed = e.getValue();
            if (committed < from || committed >= to) {
                continue;
            }
            Long started = startedAt.get(e.getKey());
            if (started == null || started > deadline) {
                lost++;
                continue;
            }
            long nanos = started - committed;
            if (nanos < 0) {
                // The handler ran before the producer's future completed: the commit came first.
                early++;
                nanos = 0;
            }
            ms.add(nanos / 1e6);
        }
        double[] sorted = ms.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        long messages = sorted.length + lost;
        return new LatencyBenchmark.Latencies(messages, messages / ((to - from) / 1e9), Bench.quantile(sorted, 0.50),
                Bench.quantile(sorted, 0.95), Bench.quantile(sorted, 0.99),
                sorted.length == 0 ? Double.NaN : sorted[sorted.length - 1], early, lost);
    }

    private static void parkUntil(long nanos) {
        while (System.nanoTime() < nanos) {
            LockSupport.parkNanos(nanos - System.nanoTime());
        }
    }

    private static void waitUntil(BooleanSupplier done, long timeoutNanos) {
        long deadline = System.nanoTime() + timeoutNanos;
        while (!done.getAsBoolean() && System.nanoTime() < deadline) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
    }
}
