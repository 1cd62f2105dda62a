package dev.sluice.internal.metrics;

import dev.sluice.MetricSnapshot;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The gauges of a client given a registry: per group {@code sluice.consumer.lag.messages},
 * {@code sluice.consumer.backlog.messages} and {@code sluice.dead.letters}; per queue {@code sluice.queue.jobs} by
 * {@code state}. A gauge reads a value set by the last refresh ({@link #update}), never the database: a scrape costs
 * no statement. Gauges are registered for a group or queue the first time a refresh shows it and removed from the
 * registry when a refresh no longer does (the group's stream was destroyed, the queue has no jobs left).
 */
final class MicrometerGauges {
    private final MeterRegistry registry;
    /** By {@code group:STREAM/GROUP} or {@code queue:QUEUE}: the gauges of that object, in {@link #update}'s order. */
    private final Map<String, List<Held>> held = new HashMap<>();

    MicrometerGauges(MeterRegistry registry) {
        this.registry = registry;
    }

    /** One gauge and the value it reads. */
    private static final class Held {
        final Meter meter;
        final Value value;

        Held(Meter meter, Value value) {
            this.meter = meter;
            this.value = value;
        }
    }

    /** What a gauge reads: the figure of the last refresh. */
    private static final class Value {
        volatile double v = Double.NaN;
    }

    /** Sets the gauges to one refresh's figures; adds those of new groups and queues, removes those gone. */
    synchronized void update(List<MetricSnapshot> figures) {
        Set<String> seen = new HashSet<>();
        for (MetricSnapshot s : figures) {
            if ("group".equals(s.kind())) {
                int slash = s.name().indexOf('/'); // stream names hold no '/'
                if (slash <= 0) {
                    continue;
                }
                String key = "group:" + s.name();
                Tags tags = Tags.of("stream", s.name().substring(0, slash), "group", s.name().substring(slash + 1));
                set(held.computeIfAbsent(key, k -> List.of(
                        gauge("sluice.consumer.lag.messages", "Messages of the stream the group has not committed (head - committed)", tags),
                        gauge("sluice.consumer.backlog.messages", "Messages of the stream the group has not claimed yet (head - claimed)", tags),
                        gauge("sluice.dead.letters", "Dead letters of the group not yet redriven, purged or swept", tags))),
                        s.lag(), s.backlog(), s.dead());
                seen.add(key);
            } else if ("queue".equals(s.kind())) {
                String key = "queue:" + s.name();
                String d = "Jobs of the queue by state";
                set(held.computeIfAbsent(key, k -> List.of(
                        gauge("sluice.queue.jobs", d, Tags.of("queue", s.name(), "state", "pending")),
                        gauge("sluice.queue.jobs", d, Tags.of("queue", s.name(), "state", "processing")),
                        gauge("sluice.queue.jobs", d, Tags.of("queue", s.name(), "state", "dead")))),
                        s.pending(), s.processing(), s.dead());
                seen.add(key);
            }
        }
        for (Iterator<Map.Entry<String, List<Held>>> it = held.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, List<Held>> e = it.next();
            if (!seen.contains(e.getKey())) {
                remove(e.getValue());
                it.remove();
            }
        }
    }

    /** Removes every gauge from the registry. */
    synchronized void removeAll() {
        held.values().forEach(this::remove);
        held.clear();
    }

    private Held gauge(String name, String description, Tags tags) {
        Value value = new Value();
        Gauge g = Gauge.builder(name, value, x -> x.v).description(description).tags(tags).strongReference(true)
                .register(registry);
        return new Held(g, value);
    }

    private static void set(List<Held> gauges, Long... values) {
        for (int i = 0; i < values.length; i++) {
            gauges.get(i).value.v = values[i] == null ? Double.NaN : values[i];
        }
    }

    private void remove(List<Held> gauges) {
        for (Held h : gauges) {
            registry.remove(h.meter);
        }
    }
}
