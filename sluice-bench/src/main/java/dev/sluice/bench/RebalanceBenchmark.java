package dev.sluice.bench;

import dev.sluice.ConsumeOptions;
import dev.sluice.ConsumerGroup;
import dev.sluice.GroupConfig;
import dev.sluice.ProduceOptions;
import dev.sluice.Producer;
import dev.sluice.ProducerConfig;
import dev.sluice.Stream;
import dev.sluice.StreamConfig;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code sluice bench rebalance}: a partitioned group of N buckets (default 16) with a keyed backlog (default
 * 100,000 messages, 10,000 keys) is consumed by M members (default 4; each a client of its own, see
 * {@link RebalanceMember}) on a short fleet lease (default 3 s). Once every bucket is owned and no member holds more
 * than its fair share, and a fifth of the backlog is consumed, one member is crashed (the one holding most buckets)
 * and A more start (default 2). Measured from the crash, by polling {@code shard_lease} every 50 ms:
 * {@code reowned_s} until every bucket has a live lease held by a live member (its fleet instance live, its client
 * among the members still running), {@code balanced_s} until moreover no member holds more than ceil(N / live
 * members), and {@code drained_s} until every message of the backlog was delivered. {@code victim_held_after_kill}
 * shows the crash released nothing. Target: re-owned within the lease + 5 s.
 */
public final class RebalanceBenchmark {
    public static final String SCENARIO = "rebalance";
    /** Share of the backlog consumed before the crash. */
    static final double KILL_AFTER = 0.2;
    /** The drain gives up when nothing new was delivered for this long. */
    static final Duration STALL = Duration.ofSeconds(30);

    /**
     * What to run.
     *
     * @param databaseUrl JDBC URL, or null for a temporary embedded server
     * @param buckets     buckets of the partitioned group (1..1024; default 16)
     * @param members     members before the crash (2..32; default 4)
     * @param added       members started after it (0..32; default 2)
     * @param backlog     messages produced before any member starts (1,000..10,000,000; default 100,000)
     * @param keys        distinct message keys (1..1,000,000; default 10,000)
     * @param lease       the members' fleet lease (1 s..60 s; default 3 s)
     * @param concurrency handlers per member (1..256; default 8)
     * @param payloadBytes payload size (1..65,536; default 256)
     */
    public record Options(String databaseUrl, int buckets, int members, int added, int backlog, int keys, Duration lease,
                          int concurrency, int payloadBytes) {
        public Options {
            Objects.requireNonNull(lease, "lease");
            check("buckets", buckets, 1, GroupConfig.MAX_PARTITIONS);
            check("members", members, 2, 32);
            check("added members", added, 0, 32);
            check("backlog", backlog, 1_000, 10_000_000);
            check("keys", keys, 1, 1_000_000);
            check("concurrency", concurrency, 1, 256);
            check("payload bytes", payloadBytes, 1, 65_536);
            if (lease.compareTo(Duration.ofSeconds(1)) < 0 || lease.compareTo(Duration.ofSeconds(60)) > 0) {
                throw new IllegalArgumentException("lease must be between 1s and 60s (got " + lease + ")");
            }
            if (databaseUrl != null && databaseUrl.isBlank()) {
                databaseUrl = null;
            }
        }

        private static void check(String what, int v, int min, int max) {
            if (v < min || v > max) {
                throw new IllegalArgumentException(what + " must be between " + min + " and " + max + " (got " + v + ")");
            }
        }

        public static Options defaults() {
            return new Options(null, 16, 4, 2, 100_000, 10_000, Duration.ofSeconds(3), 8, 256);
        }

        /** Seconds within which every bucket must be owned again: the lease + 5 s (the lab's bound). */
        public double boundSeconds() {
            return lease.toMillis() / 1000.0 + 5.0;
        }
    }

    /**
     * The outcome; seconds are from the crash, null when it never happened (within the limits).
     *
     * @param ownersBefore bucket count per member just before the crash
     * @param ownersAfter  bucket count per member when the buckets were balanced again (or at the end)
     */
    public record Result(Options options, ProduceBenchmark.Environment environment, Double reownedSeconds,
                         Double balancedSeconds, Double drainedSeconds, long backlogLeftAtKill, String victim,
                         int victimBuckets, int victimHeldAfterKill, Map<String, Integer> ownersBefore,
                         Map<String, Integer> ownersAfter, double settleSeconds, long lost, long duplicates,
                         long orderViolations, long keyOverlaps) implements ScenarioResult {

        @Override
        public List<Map<String, Object>> runLines() {
            return List.of();
        }

        @Override
        public Map<String, Object> summary() {
            Map<String, Object> m = BenchJson.summaryLine(SCENARIO, reownedSeconds == null ? null : BenchJson.round(reownedSeconds, 2),
                    options.lease().toMillis() / 1000.0, "fleet lease", reownedSeconds == null ? null
                            : BenchJson.round(reownedSeconds / (options.lease().toMillis() / 1000.0), 3), "s", environment);
            // The measured span: from the crash until the backlog drained.
            m.put("duration_s", drainedSeconds == null ? null : BenchJson.round(drainedSeconds, 2));
            m.put("reowned_s", reownedSeconds == null ? null : BenchJson.round(reownedSeconds, 2));
            m.put("balanced_s", balancedSeconds == null ? null : BenchJson.round(balancedSeconds, 2));
            m.put("drained_s", drainedSeconds == null ? null : BenchJson.round(drainedSeconds, 2));
            m.put("lease_s", options.lease().toMillis() / 1000.0);
            m.put("bound_s", options.boundSeconds());
            m.put("target_reowned", reownedSeconds != null && reownedSeconds <= options.boundSeconds() ? "pass" : "fail");
            m.put("buckets", options.buckets());
            m.put("members_before", options.members());
            m.put("members_after", options.members() - 1 + options.added());
            m.put("backlog", options.backlog());
            m.put("backlog_left_at_kill", backlogLeftAtKill);
            m.put("settle_s", BenchJson.round(settleSeconds, 2));
            m.put("victim", victim);
            m.put("victim_buckets", victimBuckets);
            m.put("victim_held_after_kill", victimHeldAfterKill);
            m.put("owners_before", ownersBefore);
            m.put("owners_after", ownersAfter);
            m.put("lost", lost);
            m.put("duplicates", duplicates);
            m.put("order_violations", orderViolations);
            m.put("key_overlaps", keyOverlaps);
            m.put("concurrency", options.concurrency());
            m.put("keys", options.keys());
            m.put("embedded", environment.embedded());
            return m;
        }

        @Override
        public List<String> problems() {
            List<String> p = new ArrayList<>();
            if (reownedSeconds == null) {
                p.add("the crashed member's buckets were never owned by live members again");
            }
            if (drainedSeconds == null) {
                p.add("the backlog did not drain (no progress for " + STALL.toSeconds() + " s)");
            }
            if (backlogLeftAtKill == 0) {
                p.add("the backlog was drained before the crash: nothing measured; use a larger --backlog");
            }
            if (victimBuckets > 0 && victimHeldAfterKill == 0) {
                p.add("the crashed member's buckets were free right after the crash: the crash released them");
            }
            if (lost > 0) {
                p.add(lost + " messages of the backlog were never delivered");
            }
            if (orderViolations > 0 || keyOverlaps > 0) {
                p.add("order violations " + orderViolations + ", key overlaps " + keyOverlaps);
            }
            return p;
        }
    }

    public Result run(Options options, ScenarioListener listener) {
        Objects.requireNonNull(options, "options");
        return ScenarioRunner.run(ScenarioRunner.Setup.of(options.databaseUrl(), "the rebalance benchmark",
                ProducerConfig.defaults().maxInFlight() + 2), listener, c -> measure(c, options));
    }

    private static Result measure(ScenarioRunner.Context c, Options o) throws SQLException {
        String streamName = "bench.rebalance";
        Stream<byte[]> stream = c.sluice().stream(streamName);
        stream.register(StreamConfig.defaults());
        ConsumerGroup<byte[]> group = stream.consumerGroup("partitioned");
        group.register(GroupConfig.builder().partitions(o.buckets()).build());
        long groupId = group.get().orElseThrow(() -> new BenchmarkException("the group vanished after registration")).id();
        c.listener().phase(1, "producing a backlog of " + o.backlog());
        BitSet produced = produce(stream, o);
        ShardWatch watch = new ShardWatch(c.admin(), c.schema(), groupId, o.buckets());

        BitSet received = new BitSet();
        long[] counts = new long[2]; // distinct, duplicates
        KeyOrder order = new KeyOrder(o.keys());
        ConsumeOptions consume = ConsumeOptions.defaults().withConcurrency(o.concurrency()).withLeaseTimeout(o.lease());
        List<RebalanceMember> members = new ArrayList<>();
        List<String> live = new ArrayList<>();
        java.util.function.LongConsumer delivered = id -> {
            synchronized (received) {
                int i = Math.toIntExact(id);
                if (received.get(i)) {
                    counts[1]++;
                } else {
                    received.set(i);
                    counts[0]++;
                }
            }
        };
        try {
            c.listener().phase(1, o.members() + " members consuming");
            long settleStart = System.nanoTime();
            for (int i = 1; i <= o.members(); i++) {
                String name = "member-" + i;
                members.add(RebalanceMember.start(c.dataSource(), c.schema(), name, o.lease(), streamName, group.name(),
                        consume, order, delivered));
                live.add(name);
            }
            // Settled: every bucket owned by a live member, none above its fair share, a fifth of the backlog consumed.
            long limit = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            ShardWatch.State settled;
            while (true) {
                settled = watch.read(live);
                long distinct;
                synchronized (received) {
                    distinct = counts[0];
                }
                if (settled.balanced() && distinct >= KILL_AFTER * o.backlog()) {
                    break;
                }
                if (System.nanoTime() > limit) {
                    throw new BenchmarkException("the " + o.members() + " members did not settle within 120 s: owners "
                            + settled.owners() + ", " + settled.ownedLive() + " of " + o.buckets() + " buckets owned, "
                            + distinct + " messages delivered");
                }
                sleep(50);
            }
            double settleSeconds = (System.nanoTime() - settleStart) / 1e9;
            ShardWatch.State before = settled;
            RebalanceMember victim = members.stream().max(java.util.Comparator.comparingInt(
                    (RebalanceMember m) -> before.owners().getOrDefault(m.name, 0))).orElseThrow();
            int victimBuckets = before.owners().getOrDefault(victim.name, 0);
            c.listener().phase(1, "crashing " + victim.name + " (" + victimBuckets + " buckets), starting " + o.added() + " more");
            long killedAt = System.nanoTime();
            victim.kill();
            live.remove(victim.name);
            long leftAtKill;
            synchronized (received) {
                leftAtKill = o.backlog() - counts[0];
            }
            for (int i = 1; i <= o.added(); i++) {
                String name = "member-" + (o.members() + i);
                members.add(RebalanceMember.start(c.dataSource(), c.schema(), name, o.lease(), streamName, group.name(),
                        consume, order, delivered));
                live.add(name);
            }
            Double reowned = null;
            Double balanced = null;
            Double drained = null;
            Integer heldAfter = null;
            ShardWatch.State state = before;
            long lastDistinct = -1;
            long lastProgress = System.nanoTime();
            long deadline = killedAt + TimeUnit.MINUTES.toNanos(30);
            while (System.nanoTime() < deadline && (balanced == null || drained == null)) {
                long now = System.nanoTime();
                double since = (now - killedAt) / 1e9;
                if (balanced == null || heldAfter == null) {
                    state = watch.read(live);
                    if (heldAfter == null && since >= 0.5) {
                        heldAfter = state.heldBy(victim.name);
                    }
                    if (reowned == null && state.ownedLive() == o.buckets()) {
                        reowned = since;
                    }
                    if (balanced == null && state.balanced()) {
                        balanced = since;
                    }
                }
                long distinct;
                synchronized (received) {
                    distinct = counts[0];
                }
                if (drained == null && distinct >= o.backlog()) {
                    drained = since;
                }
                if (distinct != lastDistinct) {
                    lastDistinct = distinct;
                    lastProgress = now;
                } else if (drained == null && now - lastProgress > STALL.toNanos()) {
                    break; // stuck: report what we have
                }
                if (balanced == null && now - killedAt > TimeUnit.SECONDS.toNanos(120) && drained != null) {
                    break; // drained, never balanced: report what we have
                }
                sleep(50);
            }
            members.forEach(RebalanceMember::close);
            members.clear();
            BitSet missing = (BitSet) produced.clone();
            synchronized (received) {
                missing.andNot(received);
            }
            stream.destroy(true);
            return new Result(o, c.environment(), reowned, balanced, drained, leftAtKill, victim.name, victimBuckets,
                    heldAfter == null ? 0 : heldAfter, before.owners(), state.owners(), settleSeconds, missing.cardinality(),
                    counts[1], order.orderViolations(), order.keyOverlaps());
        } finally {
            for (RebalanceMember m : members) {
                try {
                    m.close();
                } catch (RuntimeException e) {
                    // already failing; the runner drops the schema
                }
            }
        }
    }

    /** Produces the backlog (4 threads, 16 produces in flight each); the ids committed. */
    private static BitSet produce(Stream<byte[]> stream, Options o) {
        BitSet ids = new BitSet();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<ProduceOptions> keys = new ArrayList<>(o.keys());
        for (int k = 0; k < o.keys(); k++) {
            keys.add(ProduceOptions.builder().messageKey(KeyOrder.key(k)).build());
        }
        int threads = 4;
        try (Producer<byte[]> producer = stream.producer(ProducerConfig.defaults())) {
            Bench.runThreads(threads, "bench-rebalance-producer-", t -> {
                byte[] payload = Bench.randomBytes(o.payloadBytes());
                Semaphore permits = new Semaphore(16);
                for (int i = t; i < o.backlog(); i += threads) {
                    permits.acquire();
                    producer.produceAsync(payload, keys.get(ThreadLocalRandom.current().nextInt(keys.size())))
                            .whenComplete((p, e) -> {
                                if (e != null) {
                                    failure.compareAndSet(null, e);
                                } else {
                                    synchronized (ids) {
                                        ids.set(Math.toIntExact(p.id()));
                                    }
                                }
                                permits.release();
                            });
                    if (failure.get() != null) {
                        throw new BenchmarkException("a produce failed: " + failure.get(), failure.get());
                    }
                }
                if (!permits.tryAcquire(16, 60, TimeUnit.SECONDS)) {
                    throw new BenchmarkException("produces were still pending 60 s after the backlog was sent");
                }
            });
        }
        if (failure.get() != null) {
            throw new BenchmarkException("a produce failed: " + failure.get(), failure.get());
        }
        return ids;
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BenchmarkException("interrupted", e);
        }
    }
}
