package dev.sluice.spring;

import dev.sluice.ConsumeOptions;
import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.GroupConfig;
import dev.sluice.GroupInfo;
import dev.sluice.Handler;
import dev.sluice.JobHandle;
import dev.sluice.JobHandler;
import dev.sluice.Outcome;
import dev.sluice.Sluice;
import dev.sluice.Stream;
import dev.sluice.WorkOptions;
import dev.sluice.Worker;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Starts the {@link SluiceListener} and {@link SluiceJob} endpoints after the context is refreshed and drains them
 * when it stops: each consumption and worker is closed (running handlers finish and their outcomes are recorded,
 * unfinished claims are released at once) before the {@link Sluice} bean is destroyed. Consumptions and workers run
 * on the client's shared threads: no thread is started per listener.
 */
public class SluiceListenerContainer implements SmartLifecycle {
    private static final Logger log = LoggerFactory.getLogger(SluiceListenerContainer.class);

    private final Sluice sluice;
    private final SluiceListenerPostProcessor endpoints;
    private final boolean enabled;
    private final ConsumeOptions consumeDefaults;
    private final WorkOptions workDefaults;
    /** A list, not a map: an endpoint holds the bean, whose equals and hashCode are the application's. */
    private final List<Map.Entry<ListenerEndpoint, AutoCloseable>> running = new ArrayList<>();
    private volatile boolean started;
    /** What {@link #status()} reads without the lock, which a drain holds for up to its shutdown timeout. */
    private volatile List<Map.Entry<ListenerEndpoint, AutoCloseable>> view = List.of();

    /**
     * A container over the endpoints {@code endpoints} found; the defaults are checked now, so an out-of-range
     * {@code sluice.consumer.*} or {@code sluice.worker.*} value fails startup with its code.
     */
    public SluiceListenerContainer(Sluice sluice, SluiceListenerPostProcessor endpoints, SluiceProperties properties) {
        this.sluice = sluice;
        this.endpoints = endpoints;
        this.enabled = properties.getListeners().isEnabled();
        this.consumeDefaults = properties.getConsumer().toOptions();
        this.workDefaults = properties.getWorker().toOptions();
    }

    /** Registers and starts every endpoint; on a failure drains those started and rethrows. */
    @Override
    public synchronized void start() {
        if (started) {
            return;
        }
        started = true;
        if (!enabled) {
            log.info("sluice.listeners.enabled=false: {} annotated listener(s) not started", endpoints.endpoints().size());
            return;
        }
        try {
            for (ListenerEndpoint e : endpoints.endpoints()) {
                running.add(Map.entry(e, e.kind() == ListenerEndpoint.Kind.STREAM ? consume(e) : work(e)));
                log.info("sluice: {} started for {}", e.target(), e.description());
            }
            view = List.copyOf(running);
        } catch (RuntimeException ex) {
            // Half a set of listeners is worse than none: drain what started, then fail the refresh.
            stop();
            started = false;
            throw ex;
        }
    }

    private Consumption consume(ListenerEndpoint e) {
        @SuppressWarnings("unchecked")
        Stream<Object> stream = (Stream<Object>) sluice.stream(e.stream(), e.payloadType());
        ConsumerGroup<Object> group = stream.consumerGroup(e.group());
        if (e.register()) {
            declare(stream, group, e);
        }
        ConsumeOptions o = consumeDefaults;
        if (e.concurrency() != null) {
            o = o.withConcurrency(e.concurrency());
        }
        if (e.batchSize() != null) {
            o = o.withBatchSize(e.batchSize());
        }
        if (e.leaseTimeout() != null) {
            o = o.withLeaseTimeout(e.leaseTimeout());
        }
        if (e.shutdownTimeout() != null) {
            o = o.withShutdownTimeout(e.shutdownTimeout());
        }
        Handler<Object> handler = message -> {
            Object result = e.invoke(message.payload(), message, null);
            return e.returnsOutcome() && result != null ? (Outcome) result : Outcome.success();
        };
        return group.consume(handler, o);
    }

    /**
     * Registers the stream (defaults) when it is missing, and the group: created with the annotation's declaration
     * when missing; when it exists, re-declared only if a field the annotation sets differs from the stored one, the
     * fields it leaves unset keeping their stored values (an operator's retention or delivery-log setting survives).
     */
    private static void declare(Stream<Object> stream, ConsumerGroup<Object> group, ListenerEndpoint e) {
        if (stream.get().isEmpty()) {
            stream.register();
        }
        Optional<GroupInfo> stored = group.get();
        GroupConfig base = stored.map(GroupInfo::config).orElse(null);
        GroupConfig.Builder b = GroupConfig.builder();
        if (base != null) {
            b.start(base.start()).bindings(base.bindings()).concurrency(base.partitioned() ? null : base.concurrency())
                    .retry(base.retry()).deliveryLogMode(base.deliveryLogMode())
                    .acceptVersions(base.acceptVersions().toArray(Integer[]::new)).maxRangeReclaims(base.maxRangeReclaims())
                    .deadLetterRetention(base.deadLetterRetention()).partitions(base.partitions());
        }
        if (e.start() != null && base == null) {
            b.start(e.start());
        }
        if (e.bindings() != null) {
            b.bindings(e.bindings());
        }
        if (e.policy() != null) {
            b.concurrency(e.policy());
        }
        if (e.retry().any()) {
            b.retry(e.retry().over(base == null ? null : base.retry()));
        }
        GroupConfig wanted = b.build();
        if (base == null || !wanted.equals(base)) {
            group.register(wanted);
        }
    }

    private Worker work(ListenerEndpoint e) {
        WorkOptions o = workDefaults;
        if (e.concurrency() != null) {
            o = o.withConcurrency(e.concurrency());
        }
        if (e.prefetch() != null) {
            o = o.withPrefetch(e.prefetch());
        }
        if (e.shutdownTimeout() != null) {
            o = o.withShutdownTimeout(e.shutdownTimeout());
        }
        JobHandler<Object> handler = (JobHandle<Object> job) -> {
            Object result = e.invoke(job.payload(), null, job);
            if (result != null) {
                job.complete(result);
            }
        };
        @SuppressWarnings("unchecked")
        dev.sluice.Queue<Object> queue = (dev.sluice.Queue<Object>) sluice.queue(e.queue(), e.payloadType());
        return queue.work(handler, o);
    }

    /** Closes (drains) every consumption and worker, one after another. */
    @Override
    public synchronized void stop() {
        // Closed one after another: each close drains its running handlers (up to its shutdown timeout) while the
        // others' handlers go on finishing on their own threads.
        List<Map.Entry<ListenerEndpoint, AutoCloseable>> all = new ArrayList<>(running);
        running.clear();
        view = List.of();
        for (Map.Entry<ListenerEndpoint, AutoCloseable> en : all) {
            try {
                en.getValue().close();
            } catch (Exception ex) {
                log.warn("sluice: closing {} failed", en.getKey().target(), ex);
            }
        }
        started = false;
    }

    /** Whether {@link #start()} ran and {@link #stop()} did not since. */
    @Override
    public boolean isRunning() {
        return started;
    }

    /**
     * Starts after the web server (phase DEFAULT_PHASE - 2048) and stops before its graceful shutdown
     * (DEFAULT_PHASE - 1024): consumers are drained first, requests in flight may still produce on the open client.
     */
    @Override
    public int getPhase() {
        return SmartLifecycle.DEFAULT_PHASE - 512;
    }

    /**
     * Each started endpoint's target ({@code stream/group} or {@code queue:name}) and whether it still runs; empty
     * before start and after stop.
     */
    public Map<String, Boolean> status() {
        Map<String, Boolean> out = new LinkedHashMap<>();
        for (Map.Entry<ListenerEndpoint, AutoCloseable> en : view) {
            AutoCloseable c = en.getValue();
            out.put(en.getKey().target(), c instanceof Consumption con ? con.running() : ((Worker) c).running());
        }
        return out;
    }

    /** Whether the container has started (and not been stopped). */
    public boolean started() {
        return started;
    }
}
