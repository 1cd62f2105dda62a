package dev.sluice.bench;

import dev.sluice.ConsumeOptions;
import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.ConsumptionStats;
import dev.sluice.GroupConfig;
import dev.sluice.Message;
import dev.sluice.Outcome;
import dev.sluice.ProduceOptions;
import dev.sluice.Producer;
import dev.sluice.ProducerConfig;
import dev.sluice.Sluice;
import dev.sluice.Stream;
import dev.sluice.StreamConfig;
import dev.sluice.bench.E2eBenchmark.Options;
import dev.sluice.bench.E2eBenchmark.Side;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * Our side of {@link E2eBenchmark}: on a fresh stream with G consumer groups, C producer threads each keep
 * up to F {@code produceAsync} calls in flight for the phase while every group consumes with a no-op
 * handler; then the groups drain, and every committed message is checked off per group (lost and
 * duplicate deliveries). A group that does not catch up is diagnosed from its cursor, leases and
 * exception rows for the report.
 *
 * <p>A {@link Plan} varies the run for {@link E2ePartitions}: the groups' configuration, consumer clients of
 * their own (each consuming every group), keyed messages, and an observer of every handler call.
 */
final class E2eOurs {
    private E2eOurs() {
    }

    /** Sees every handler call: {@code started} before the handler notes the id, {@code finished} after. */
    interface Deliveries {
        void started(Message<byte[]> m);

        void finished(Message<byte[]> m);
    }

    /**
     * How a run differs from plain e2e.
     *
     * @param name       the stream's name suffix (the stream is {@code bench.<scenario>-<name><run>})
     * @param group      the configuration every group is registered with
     * @param consumers  the clients that consume (each runs one consumption of every group); empty: the producer's client
     * @param keys       produce options to pick from at random per message (message keys); empty: {@link ProduceOptions#NONE}
     * @param deliveries observer of every handler call, or null
     * @param drainStall the drain waits while the groups make progress, until none for this long (null: plain e2e's
     *                   fixed deadline of max(60 s, 3 × duration))
     */
    record Plan(String name, GroupConfig group, List<Sluice> consumers, List<ProduceOptions> keys, Deliveries deliveries,
                Duration drainStall) {
        Plan {
            consumers = List.copyOf(consumers);
            keys = List.copyOf(keys);
        }

        static final Plan E2E = new Plan("", GroupConfig.defaults(), List.of(), List.of(), null, null);
    }

    /** Messages our producers saw committed; guarded by its own monitor. */
    private static final class ProducedIds {
        final BitSet ids = new BitSet();
        long count;
        long max;
        long windowMin = Long.MAX_VALUE;
        long windowMax = Long.MIN_VALUE;

        synchronized void add(long id, boolean inWindow) {
            ids.set(Math.toIntExact(id));
            count++;
            max = Math.max(max, id);
            if (inWindow) {
                windowMin = Math.min(windowMin, id);
                windowMax = Math.max(windowMax, id);
            }
        }

        synchronized long count() {
            return count;
        }
    }

    /** What one group's handlers received; guarded by its own monitor. */
    private static final class Received {
        final BitSet ids = new BitSet();
        long distinct;
        long duplicates;

        synchronized void add(long id) {
            int i = Math.toIntExact(id);
            if (ids.get(i)) {
                duplicates++;
            } else {
                ids.set(i);
                distinct++;
            }
        }

        synchronized long distinct() {
            return distinct;
        }

        synchronized long missing(BitSet produced) {
            BitSet m = (BitSet) produced.clone();
            m.andNot(ids);
            return m.cardinality();
        }
    }

    static Side measure(Sluice sluice, ProducerConfig config, Connection admin, String schema, int run, Options o)
            throws SQLException {
        return measure(sluice, config, admin, schema, run, o, Plan.E2E);
    }

    static Side measure(Sluice sluice, ProducerConfig config, Connection admin, String schema, int run, Options o, Plan plan)
            throws SQLException {
        String streamName = "bench." + o.scenario() + "-" + plan.name() + run;
        Stream<byte[]> stream = sluice.stream(streamName);
        stream.register(StreamConfig.defaults());
        long streamId = stream.get().orElseThrow(() -> new BenchmarkException("the stream vanished after registration")).id();
        String log = Bench.quote(schema) + ".message_log_" + streamId;
        List<ConsumerGroup<byte[]>> groups = new ArrayList<>();
        for (int g = 1; g <= o.groups(); g++) {
            ConsumerGroup<byte[]> group = stream.consumerGroup("g" + g);
            group.register(plan.group());
            groups.add(group);
        }
        Bench.checkpoint(admin);

        ProducedIds produced = new ProducedIds();
        Received[] received = new Received[o.groups()];
        List<Consumption> consumptions = new ArrayList<>();
        ConsumeOptions consumeOptions = ConsumeOptions.defaults().withBatchSize(o.consumeBatch())
                .withConcurrency(o.consumeConcurrency());
        AtomicReference<Throwable> failure = new AtomicReference<>();
        long[] delivered = new long[1];
        long[] ranges = new long[1];
        boolean drained;
        String undrained = null;
        List<Sampler.Sample> window;
        try {
            List<Sluice> clients = plan.consumers().isEmpty() ? List.of(sluice) : plan.consumers();
            Deliveries seen = plan.deliveries();
            for (int g = 0; g < o.groups(); g++) {
                Received r = new Received();
                received[g] = r;
                for (Sluice client : clients) {
                    ConsumerGroup<byte[]> group = client == sluice ? groups.get(g)
                            : client.stream(streamName).consumerGroup(groups.get(g).name());
                    // A no-op handler: it only notes the id, so the figure is the cost of delivery itself.
                    consumptions.add(group.consume(seen == null ? m -> {
                        r.add(m.id());
                        return Outcome.success();
                    } : m -> {
                        seen.started(m);
                        r.add(m.id());
                        seen.finished(m);
                        return Outcome.success();
                    }, consumeOptions));
                }
            }
            long start = System.nanoTime();
            Phase phase = Phase.start(o.warmup(), o.duration());
            long windowStart = start + o.warmup().toNanos();
            long windowEnd = windowStart + o.duration().toNanos();
            try (Sampler sampler = Sampler.start(start, E2eBenchmark.SAMPLE_PERIOD, () -> {
                long[] v = new long[o.groups() + 1];
                v[0] = produced.count();
                for (int g = 0; g < o.groups(); g++) {
                    v[g + 1] = received[g].distinct();
                }
                return v;
            })) {
                try (Producer<byte[]> producer = stream.producer(config)) {
                    phase.run(o.callers(), "bench-" + o.scenario() + "-caller-", i -> {
                        byte[] payload = Bench.randomBytes(o.payloadBytes());
                        // Each caller keeps up to inFlight produces pending, as an application using
                        // produceAsync with a bound would; the batcher coalesces them into transactions.
                        Semaphore permits = new Semaphore(o.inFlight());
                        List<ProduceOptions> keys = plan.keys();
                        while (phase.running()) {
                            permits.acquire();
                            ProduceOptions po = keys.isEmpty() ? ProduceOptions.NONE
                                    : keys.get(ThreadLocalRandom.current().nextInt(keys.size()));
                            producer.produceAsync(payload, po).whenComplete((p, e) -> {
                                try {
                                    if (e != null) {
                                        failure.compareAndSet(null, e);
                                    } else {
                                        produced.add(p.id(), phase.measured(System.nanoTime()));
                                    }
                                } finally {
                                    permits.release();
                                }
                            });
                            Throwable f = failure.get();
                            if (f != null) {
                                throw new BenchmarkException("a produce failed: " + f, f);
                            }
                        }
                        if (!permits.tryAcquire(o.inFlight(), 60, TimeUnit.SECONDS)) {
                            throw new BenchmarkException("produces were still pending 60 s after the window");
                        }
                    });
                }
                sampler.awaitSampleAfter(windowEnd);
                window = sampler.between(windowStart, windowEnd, E2eBenchmark.SAMPLE_PERIOD);
            }
            if (failure.get() != null) {
                throw new BenchmarkException("a produce failed: " + failure.get(), failure.get());
            }
            drained = plan.drainStall() == null ? drain(produced, received, o) : drainWhileProgressing(produced, received,
                    plan.drainStall());
            if (!drained) {
                // Say where the undelivered messages are stuck while the consumers still run.
                undrained = diagnose(admin, schema, streamId, groups, produced, received);
            }
        } finally {
            for (Consumption c : consumptions) {
                c.close();
                ConsumptionStats s = c.stats();
                delivered[0] += s.delivered();
                ranges[0] += s.rangesClaimed() + s.rangesReclaimed();
            }
        }
        if (produced.windowMax < produced.windowMin) {
            throw new BenchmarkException("no message was produced inside the measured window of run " + run);
        }
        double batchSize = meanBatch(admin, log, produced.windowMin, produced.windowMax);
        long lost = 0;
        long duplicates = 0;
        for (Received r : received) {
            lost += r.missing(produced.ids);
            duplicates += r.duplicates;
        }
        stream.destroy(true);
        double[] f = E2eBenchmark.figures(window, o.groups());
        return new Side(f[0], f[1], f[2], f[3], batchSize, ranges[0] == 0 ? Double.NaN : (double) delivered[0] / ranges[0],
                produced.count(), lost, duplicates, drained, undrained);
    }

    /**
     * For each group that misses messages after the drain timeout: the first missing ids, the group's
     * cursor, the claim leases and exception rows around them. Read-only; for the report.
     */
    private static String diagnose(Connection admin, String schema, long streamId, List<ConsumerGroup<byte[]>> groups,
                                   ProducedIds produced, Received[] received) {
        StringBuilder b = new StringBuilder();
        String q = Bench.quote(schema);
        for (int g = 0; g < received.length; g++) {
            BitSet missing;
            synchronized (produced) {
                missing = (BitSet) produced.ids.clone();
            }
            synchronized (received[g]) {
                missing.andNot(received[g].ids);
            }
            if (missing.isEmpty()) {
                continue;
            }
            List<Long> ids = new ArrayList<>();
            for (int i = missing.nextSetBit(0); i >= 0 && ids.size() < 10; i = missing.nextSetBit(i + 1)) {
                ids.add((long) i);
            }
            b.append("group ").append(groups.get(g).name()).append(": ").append(missing.cardinality())
                    .append(" missing, first ").append(ids);
            try {
                long groupId = groups.get(g).get().orElseThrow().id();
                b.append("; cursor ").append(rows(admin, "SELECT claimed, committed, settled_head, pending_head, pending_xids"
                        + " FROM " + q + ".consumer_group_cursor_" + streamId + " WHERE consumer_group_id = " + groupId
                        + " ORDER BY seq DESC LIMIT 1"));
                long low = ids.get(0);
                b.append("; leases ").append(rows(admin, "SELECT low, high, expires_at > now() AS live, reclaims, released,"
                        + " cardinality(resolved) FROM " + q + ".claim_lease_" + streamId + " WHERE consumer_group_id = "
                        + groupId + " ORDER BY low LIMIT 5"));
                b.append("; rows ").append(rows(admin, "SELECT message_id, status, attempts, can_run_after > now() AS later"
                        + " FROM " + q + ".exception_queue_" + streamId + " WHERE consumer_group_id = " + groupId
                        + " AND message_id >= " + low + " ORDER BY message_id LIMIT 5"));
                b.append("; in log ").append(rows(admin, "SELECT count(*) FROM " + q + ".message_log_" + streamId
                        + " WHERE id = ANY('{" + ids.stream().map(String::valueOf).reduce((x, y) -> x + "," + y).orElse("")
                        + "}'::bigint[])"));
            } catch (SQLException | RuntimeException e) {
                b.append("; diagnosis failed: ").append(e.getMessage());
            }
            b.append(". ");
        }
        return b.toString().trim();
    }

    private static String rows(Connection c, String sql) throws SQLException {
        StringBuilder b = new StringBuilder("[");
        try (java.sql.Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            int n = rs.getMetaData().getColumnCount();
            while (rs.next()) {
                b.append(b.length() > 1 ? ", " : "").append('(');
                for (int i = 1; i <= n; i++) {
                    b.append(i > 1 ? " " : "").append(rs.getString(i));
                }
                b.append(')');
            }
        }
        return b.append(']').toString();
    }

    /** Waits until every group received every committed message; false when they did not catch up in time. */
    private static boolean drain(ProducedIds produced, Received[] received, Options o) {
        long target = produced.count();
        // Generous: a consumer slower than the producers has a backlog of up to the whole window to work off.
        long deadline = System.nanoTime() + Math.max(TimeUnit.SECONDS.toNanos(60), 3 * o.duration().toNanos());
        while (System.nanoTime() < deadline) {
            boolean all = true;
            for (Received r : received) {
                if (r.distinct() < target) {
                    all = false;
                    break;
                }
            }
            if (all) {
                return true;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
        return false;
    }

    /**
     * Waits until every group received every committed message, for as long as they keep making progress: false when
     * no group received a new message for {@code stall}, or after 30 minutes. A slow but steady group (an ordered one
     * behind a whole window of backlog) is given the time it needs; a stuck one is reported as undrained.
     */
    private static boolean drainWhileProgressing(ProducedIds produced, Received[] received, Duration stall) {
        long target = produced.count();
        long hardDeadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(30);
        long last = -1;
        long lastProgress = System.nanoTime();
        while (System.nanoTime() < hardDeadline) {
            long sum = 0;
            boolean all = true;
            for (Received r : received) {
                long d = r.distinct();
                sum += d;
                all &= d >= target;
            }
            if (all) {
                return true;
            }
            if (sum != last) {
                last = sum;
                lastProgress = System.nanoTime();
            } else if (System.nanoTime() - lastProgress > stall.toNanos()) {
                return false;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
        return false;
    }

    /** Mean messages per producing transaction over ids in the window: each batch is one transaction (one xmin). */
    private static double meanBatch(Connection admin, String log, long minId, long maxId) throws SQLException {
        try (PreparedStatement ps = admin.prepareStatement("SELECT count(*)::float8 / count(DISTINCT xmin::text::bigint) FROM "
                + log + " WHERE id BETWEEN ? AND ?")) {
            ps.setLong(1, minId);
            ps.setLong(2, maxId);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getDouble(1);
            }
        }
    }
}
