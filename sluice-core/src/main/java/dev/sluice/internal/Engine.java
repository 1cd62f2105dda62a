package dev.sluice.internal;

import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import dev.sluice.internal.catalog.MigrationAdmin;
import dev.sluice.internal.catalog.StreamCatalog;
import dev.sluice.internal.catalog.SystemCatalog;
import dev.sluice.internal.consume.GroupOperations;
import dev.sluice.internal.consume.GroupRegistry;
import dev.sluice.internal.consume.ReaderOffsets;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.lock.LockStore;
import dev.sluice.internal.notify.ClientSession;
import dev.sluice.internal.queue.JobStore;
import dev.sluice.internal.runtime.ClientRuntime;
import dev.sluice.internal.runtime.Tracker;
import dev.sluice.internal.schedule.ScheduleStore;
import dev.sluice.internal.schema.Migrator;
import dev.sluice.internal.schema.SchemaSteps;
import java.util.concurrent.Executor;
import javax.sql.DataSource;

/**
 * The composition root of one client: builds every store once (each the one writer of its tables), and owns
 * the session connection, the shared runtime, the tracking of running parts and the routing of local
 * wake-ups. Building it does no I/O and starts no thread (with a meter registry it schedules the gauges' refresh,
 * whose reads run on the scheduler); the session, the runtime's threads and the maintenance thread start on first use.
 * {@link #close()} closes the tracked parts (newest first), then the runtime, the maintenance thread and the session.
 */
public final class Engine implements AutoCloseable {
    private final String schema;
    private final String clientId;
    private final boolean migrate;
    private final Db db;
    private final SystemCatalog systemCatalog;
    private final StreamCatalog streamCatalog;
    private final MigrationAdmin migrationAdmin;
    private final GroupRegistry groupRegistry;
    private final GroupOperations groupOperations;
    private final ReaderOffsets readerOffsets;
    private final JobStore jobStore;
    private final LockStore lockStore;
    private final dev.sluice.internal.token.TokenStore tokenStore;
    private final ScheduleStore scheduleStore;
    private final dev.sluice.internal.consume.LogReader logReader;
    private final dev.sluice.internal.fleet.WorkerConfigs workerConfigs;
    private final dev.sluice.internal.fleet.FleetReads fleetReads;
    private final dev.sluice.internal.fleet.Instances instances;
    private final dev.sluice.internal.shard.Shards shards;
    private final dev.sluice.internal.shard.ShardLeases shardLeases;
    private final dev.sluice.internal.manager.MaintenancePass maintenancePass;
    private final Settings settings;
    /** This client's candidacy for the manager (null until the first running part starts, or with maintenance off). */
    private volatile dev.sluice.internal.manager.Manager manager;
    private final Tracker tracker = new Tracker();
    private final ClientRuntime runtime;
    private volatile ClientSession session;
    /** The wake-ups of this client's own commits, sent to the other processes after them. */
    private final dev.sluice.internal.notify.WakeSender wakes;
    private final dev.sluice.internal.runtime.OnDemandThread maintenance;
    /** Set once the control plane was found current; queues and locks check it before their first statement. */
    private volatile boolean controlPlaneChecked;
    private final dev.sluice.internal.metrics.Meters meters; // no-ops without a registry (docs/metrics.md)
    private final dev.sluice.internal.metrics.MeterRefresh meterRefresh; // the gauges' refresh; null without a registry

    /**
     * The fleet, maintenance, meter, tracing and transaction settings of a client.
     * @param maintenance         whether the client competes for the schema's manager
     * @param fleetLease          how long a fleet instance stays live without a heartbeat (beats every third of it)
     * @param maintenanceInterval how often the manager runs a maintenance pass
     * @param snapshotRetention   how long instance snapshots are kept past their recorded expiry
     * @param meterRefresh        how often the gauges' figures are read (with a registry)
     * @param tracing             the trace headers and handler spans (no-ops without OpenTelemetry; docs/tracing.md)
     * @param ambient             the caller's transaction that produce and enqueue join (AmbientTransaction.NONE)
     */
    public record Settings(boolean maintenance, java.time.Duration fleetLease, java.time.Duration maintenanceInterval,
                           java.time.Duration snapshotRetention, java.time.Duration meterRefresh,
                           dev.sluice.internal.tracing.Tracing tracing, dev.sluice.AmbientTransaction ambient) {
    }

    /**
     * @param streamProducers how schedule fires reach a stream: through the client's own producer of that stream
     *                        and payload serde
     * @param meters          the client's meters; with a registry the gauges' refresh is scheduled here (its reads run
     *                        on the shared scheduler, none in the constructor)
     */
    public Engine(DataSource dataSource, String schema, String clientId, boolean migrate, boolean forceSchema,
                  SchemaSteps steps, int schedulerThreads, int handlerThreads,
                  ScheduleStore.Producers streamProducers, Settings settings, dev.sluice.internal.metrics.Meters meters) {
        this.settings = settings;
        this.schema = schema;
        this.clientId = clientId;
        this.migrate = migrate;
        this.runtime = new ClientRuntime(schema, schedulerThreads, handlerThreads);
        this.maintenance = new dev.sluice.internal.runtime.OnDemandThread("sluice-maintenance-" + schema);
        this.db = new Db(dataSource);
        this.wakes = new dev.sluice.internal.notify.WakeSender(db, schema, runtime);
        Migrator migrator = new Migrator(schema, clientId, steps).forceSchema(forceSchema);
        this.systemCatalog = new SystemCatalog(db, schema, migrator);
        this.streamCatalog = new StreamCatalog(db, schema, migrator, clientId);
        this.migrationAdmin = new MigrationAdmin(db, schema, migrator);
        this.workerConfigs = new dev.sluice.internal.fleet.WorkerConfigs(db, schema, streamCatalog.quotedSchema(), clientId);
        this.fleetReads = new dev.sluice.internal.fleet.FleetReads(db, workerConfigs);
        this.instances = new dev.sluice.internal.fleet.Instances(db, schema, workerConfigs, clientId, settings.fleetLease(),
                runtime, this::session);
        this.shards = new dev.sluice.internal.shard.Shards(schema);
        this.shardLeases = new dev.sluice.internal.shard.ShardLeases(db, schema, settings.fleetLease(), runtime, this::session);
        this.groupRegistry = new GroupRegistry(db, streamCatalog, schema, clientId, workerConfigs, ShardBuckets.declarations(shards));
        this.groupOperations = new GroupOperations(db, groupRegistry, schema);
        this.readerOffsets = new ReaderOffsets(db, streamCatalog, schema);
        this.jobStore = new JobStore(db, schema, this::session);
        this.lockStore = new LockStore(db, schema);
        this.tokenStore = new dev.sluice.internal.token.TokenStore(db, schema);
        this.scheduleStore = new ScheduleStore(db, schema, migrator, jobStore, streamProducers);
        this.logReader = new dev.sluice.internal.consume.LogReader(db, streamCatalog);
        this.maintenancePass = new dev.sluice.internal.manager.MaintenancePass(db, schema, streamCatalog.quotedSchema(),
                new dev.sluice.internal.fleet.FleetSweeps(db, workerConfigs),
                new dev.sluice.internal.maint.Janitor(db, schema, streamCatalog)::sweep, jobStore,
                // Streams at another family version than this code's are left out (their statements may not fit).
                () -> streamCatalog.list().stream().filter(s -> s.familyVersion() == streamCatalog.familyCodeVersion()).toList(),
                groupRegistry::list, () -> jobStore.listing().queues(), settings.snapshotRetention());
        this.meters = meters;
        this.meterRefresh = dev.sluice.internal.metrics.MeterRefresh.startFor(meters, db, streamCatalog.quotedSchema(),
                this::controlPlaneInstalled, maintenancePass::currentMetrics, settings.meterRefresh(), runtime);
    }

    /** The refresh of the gauges, or null without a registry. */
    public dev.sluice.internal.metrics.MeterRefresh meterRefresh() {
        return meterRefresh;
    }

    public dev.sluice.internal.fleet.WorkerConfigs workerConfigs() {
        return workerConfigs;
    }

    public dev.sluice.internal.fleet.FleetReads fleetReads() {
        return fleetReads;
    }

    /** This client's fleet instances and their heartbeat. */
    public dev.sluice.internal.fleet.Instances instances() {
        return instances;
    }

    public dev.sluice.internal.manager.MaintenancePass maintenancePass() {
        return maintenancePass;
    }

    public Settings settings() {
        return settings;
    }

    /** This client's candidacy for the manager, or null when it has none (maintenance off, nothing started yet). */
    public dev.sluice.internal.manager.Manager manager() {
        return manager;
    }

    /**
     * Starts this client's candidacy for the schema's manager, once (with maintenance on): called when the first
     * running part starts, and by servers that run nothing else. No I/O here: the heartbeat claims it.
     */
    public void competeForManager() {
        if (!settings.maintenance() || manager != null || tracker.closed()) {
            return;
        }
        synchronized (this) {
            if (manager == null && !tracker.closed()) {
                dev.sluice.internal.manager.Manager m = new dev.sluice.internal.manager.Manager(instances, maintenancePass,
                        clientId, settings.maintenanceInterval(), runtime);
                manager = m;
                m.start();
            }
        }
    }

    public String schema() {
        return schema;
    }

    public String clientId() {
        return clientId;
    }

    public Db db() {
        return db;
    }

    public SystemCatalog systemCatalog() {
        return systemCatalog;
    }

    public StreamCatalog streamCatalog() {
        return streamCatalog;
    }

    public MigrationAdmin migrationAdmin() {
        return migrationAdmin;
    }

    public GroupRegistry groupRegistry() {
        return groupRegistry;
    }

    public GroupOperations groupOperations() {
        return groupOperations;
    }

    public ReaderOffsets readerOffsets() {
        return readerOffsets;
    }

    public JobStore jobStore() {
        return jobStore;
    }

    public LockStore lockStore() {
        return lockStore;
    }

    /** The API tokens of the schema. */
    public dev.sluice.internal.token.TokenStore tokenStore() {
        return tokenStore;
    }

    public ScheduleStore scheduleStore() {
        return scheduleStore;
    }

    /** The client's shared threads (created with the client; threads start on first use). */
    public ClientRuntime runtime() {
        return runtime;
    }

    /** The client's session connection (LISTEN wake-ups, presence locks), started on first use. */
    public ClientSession session() {
        ClientSession s = session;
        if (s == null) {
            synchronized (this) {
                s = session;
                if (s == null) {
                    s = new ClientSession(db.dataSource(), schema);
                    session = s;
                }
            }
        }
        return s;
    }

    /** The client's single background thread for maintenance (partitions ahead), started by its first task. */
    public Executor maintenance() {
        return maintenance;
    }

    /**
     * Checks once per client that the control plane is installed and current (queues, locks and schedules
     * need no registration of their own, but their tables live there). A missing control plane is installed
     * on first use, as stream registration does, when this client may migrate; otherwise it is
     * {@link ErrorCode#SYSTEM_NOT_REGISTERED}. An older one is {@link ErrorCode#DATABASE_OLDER}: upgrades stay with
     * registration and {@code sluice migrate up}, not with runtime calls.
     */
    public void requireControlPlane() {
        if (!controlPlaneChecked) {
            if (systemCatalog.get().isEmpty()) {
                if (!migrate) {
                    throw new SluiceException(ErrorCode.SYSTEM_NOT_REGISTERED, "schema '" + schema
                            + "' has no Sluice control plane (queues and locks live there)");
                }
                systemCatalog.register(true);
            }
            controlPlaneChecked = true;
        }
    }

    /** Whether the control plane is installed (operator listings answer empty without one). */
    public boolean controlPlaneInstalled() {
        if (!controlPlaneChecked && systemCatalog.get().isEmpty()) {
            return false;
        }
        controlPlaneChecked = true;
        return true;
    }

    /**
     * A producer of this client committed to the stream (in a transaction of its own or a joined ambient one): wakes
     * this process's consumers of it at once, and the other processes' by a wake-up sent after the commit.
     */
    public void committed(long streamId) {
        ClientSession s = session;
        if (s != null) {
            s.wakeLocal(streamId);
        }
        wakes.send(Long.toString(streamId));
    }

    /** Jobs of this client were committed to the queue: wakes its workers here at once, and elsewhere after the commit. */
    public void enqueued(String queue) {
        ClientSession s = session;
        if (s != null) {
            s.wakeLocal(JobStore.wakeKey(queue));
        }
        wakes.send(JobStore.wakeKey(queue));
    }

    /**
     * Registers a built part the client must close (producers, consumptions, workers, leaderships, schedule
     * runners) until it closes itself ({@link #untrack}); call it before the part starts anything. Once the
     * client is closed the part is closed at once and {@link ErrorCode#CLIENT_CLOSED} is thrown.
     */
    public void track(AutoCloseable part) {
        tracker.track(part);
        competeForManager();
    }

    /**
     * Joins the fleet for a part that is built and tracked but not started: when the claim fails, the part is
     * closed (and untracked) and the error thrown.
     */
    private dev.sluice.internal.fleet.WorkerInstance join(dev.sluice.internal.fleet.WorkerKey key, AutoCloseable part) {
        try {
            return instances.join(key);
        } catch (RuntimeException e) {
            try {
                part.close();
            } catch (Exception suppressed) {
                e.addSuppressed(suppressed);
            }
            untrack(part);
            throw e;
        }
    }

    /** A part closed itself: the client no longer holds it. */
    public void untrack(AutoCloseable part) {
        tracker.untrack(part);
    }

    /** How many started parts the client holds. */
    public int tracked() {
        return tracker.size();
    }

    /**
     * Starts a consumption of a registered group: built without starting anything, tracked (refused with
     * {@link ErrorCode#CLIENT_CLOSED} once the client is closed), then started on the shared runtime.
     *
     * @throws SluiceException {@link ErrorCode#GROUP_NOT_FOUND} when the group is not registered
     */
    public <T> dev.sluice.Consumption consume(String stream, String group, Class<T> payloadType, dev.sluice.Handler<T> handler,
                                              dev.sluice.ConsumeOptions options) {
        GroupRegistry.GroupRef ref = groupRegistry.resolve(stream, group);
        java.util.Set<Integer> accept = ref.config().acceptVersions().isEmpty()
                ? (payloadType == byte[].class ? null
                        : java.util.Set.of(dev.sluice.internal.produce.MessageEncoder.schemaVersionOf(payloadType)))
                : ref.config().acceptVersions();
        dev.sluice.internal.fleet.PartGate gate = new dev.sluice.internal.fleet.PartGate();
        dev.sluice.Serde<T> serde = dev.sluice.Serde.forType(payloadType);
        dev.sluice.Consumption consumer;
        Runnable start;
        java.util.function.Consumer<Runnable> onClose;
        if (ref.config().partitioned()) { // a member: its buckets through shard leases of this client's heartbeat
            dev.sluice.internal.consume.PartitionConsumer<T> p = new dev.sluice.internal.consume.PartitionConsumer<>(db, schema,
                    ref, handler, options, serde, accept, this::session, runtime, gate,
                    change -> new ShardBuckets(shardLeases.join(ref.groupId(), ref.config().partitions(), gate::instanceId, change)),
                    meters.consumer(ref.streamName(), ref.groupName()), settings.tracing().consumer(ref.streamName(), ref.groupName()));
            consumer = p;
            start = p::start;
            onClose = p::onClose;
        } else {
            dev.sluice.internal.consume.GroupConsumer<T> g = new dev.sluice.internal.consume.GroupConsumer<>(db, schema, ref,
                    handler, options, serde, accept, this::session, runtime, gate, meters.consumer(ref.streamName(), ref.groupName()),
                    settings.tracing().consumer(ref.streamName(), ref.groupName()));
            consumer = g;
            start = g::start;
            onClose = g::onClose;
        }
        onClose.accept(() -> { // the client lets go of a closed consumption; its instance leaves the fleet
            untrack(consumer);
            gate.leave();
        });
        track(consumer);
        gate.set(join(dev.sluice.internal.fleet.WorkerKey.consumer(ref.streamName(), ref.groupName()), consumer));
        start.run();
        return consumer;
    }

    /** The buckets of a partitioned group with positions and owners (empty without partitions). */
    public java.util.List<dev.sluice.PartitionInfo> partitions(String stream, String group) {
        return new PartitionViews(db, groupRegistry, groupOperations, shards).list(stream, group);
    }

    /** Changes a paused partitioned group's bucket count ({@link dev.sluice.GroupAdmin#repartition}). */
    public dev.sluice.GroupInfo repartition(String stream, String group, int partitions) {
        return groupRegistry.repartition(stream, group, partitions);
    }

    /**
     * Starts a queue worker: built without starting anything (the session too is resolved at start), tracked
     * (refused with {@link ErrorCode#CLIENT_CLOSED} once the client is closed, nothing started), then started
     * on the shared runtime.
     */
    public <T> dev.sluice.Worker work(String queue, dev.sluice.Serde<T> serde, dev.sluice.JobHandler<T> handler,
                                      dev.sluice.WorkOptions options, int maxResultBytes) {
        requireControlPlane();
        java.util.concurrent.atomic.AtomicReference<dev.sluice.Worker> self = new java.util.concurrent.atomic.AtomicReference<>();
        dev.sluice.internal.fleet.PartGate gate = new dev.sluice.internal.fleet.PartGate();
        dev.sluice.internal.queue.QueueWorker<T> w = new dev.sluice.internal.queue.QueueWorker<>(jobStore, queue, serde, handler,
                options, maxResultBytes, options.wakeups() ? this::session : null, clientId, runtime, () -> {
                    untrack(self.get());
                    gate.leave();
                }, gate, meters.worker(queue), settings.tracing().worker(queue));
        self.set(w);
        track(w); // closes w again when refused
        gate.set(join(dev.sluice.internal.fleet.WorkerKey.queue(queue), w));
        w.start();
        return w;
    }

    /**
     * A producer of a stream: built (no I/O: the stream is resolved on the first produce), then tracked; when the
     * client is closed it is closed again at once and {@link ErrorCode#CLIENT_CLOSED} is thrown.
     */
    public <T> dev.sluice.Producer<T> producer(String stream, Class<T> payloadType, dev.sluice.ProducerConfig config) {
        java.util.concurrent.atomic.AtomicReference<dev.sluice.Producer<T>> self = new java.util.concurrent.atomic.AtomicReference<>();
        dev.sluice.Producer<T> p = new dev.sluice.internal.produce.DefaultProducer<>(db, streamCatalog, schema, stream,
                payloadType, config, maintenance(), () -> untrack(self.get()), this::committed,
                meters.producer(stream), settings.tracing(), settings.ambient());
        self.set(p);
        track(p); // closes p again when refused
        return p;
    }

    /**
     * Contends for leadership on a TTL lock: built, tracked (refused with {@link ErrorCode#CLIENT_CLOSED} once the
     * client is closed, nothing started), then started.
     */
    public dev.sluice.Leadership lead(String lock, java.time.Duration ttl, dev.sluice.LeaderListener listener) {
        java.util.concurrent.atomic.AtomicReference<dev.sluice.Leadership> self = new java.util.concurrent.atomic.AtomicReference<>();
        dev.sluice.internal.lock.LeaderElection election = new dev.sluice.internal.lock.LeaderElection(lockStore, lock,
                clientId, ttl, listener, () -> untrack(self.get()));
        self.set(election);
        requireControlPlane();
        track(election);
        election.start();
        return election;
    }

    /**
     * A schedule runner in this process: built, tracked (refused with {@link ErrorCode#CLIENT_CLOSED} once the
     * client is closed, nothing started), then started.
     */
    public dev.sluice.ScheduleRunner runSchedules() {
        requireControlPlane();
        java.util.concurrent.atomic.AtomicReference<dev.sluice.ScheduleRunner> self = new java.util.concurrent.atomic.AtomicReference<>();
        dev.sluice.internal.fleet.PartGate gate = new dev.sluice.internal.fleet.PartGate();
        dev.sluice.internal.schedule.ScheduleLoop loop = new dev.sluice.internal.schedule.ScheduleLoop(scheduleStore,
                session(), schema, () -> {
                    untrack(self.get());
                    gate.leave();
                }, gate);
        self.set(loop);
        track(loop);
        gate.set(join(dev.sluice.internal.fleet.WorkerKey.schedules(), loop));
        loop.start();
        return loop;
    }

    /** Fenced reads of a stream's log (the reader keeps no state). */
    public dev.sluice.internal.consume.LogReader logReader() {
        return logReader;
    }

    /**
     * Closes every tracked part (newest first), then the gauges' refresh, the manager candidacy and the fleet heartbeat
     * (their rows are deleted, so standbys take over at once), the runtime, the maintenance thread and the session.
     */
    @Override
    public void close() {
        tracker.closeAll();
        if (meterRefresh != null) {
            meterRefresh.close(); // the gauges go; counters and timers stay in the registry
        }
        dev.sluice.internal.manager.Manager candidacy;
        synchronized (this) {
            candidacy = manager;
        }
        if (candidacy != null) {
            candidacy.close();
        }
        shardLeases.close();
        instances.close();
        wakes.close(); // what the closed parts committed last still wakes the other processes
        runtime.close();
        maintenance.shutdown();
        ClientSession s = session;
        if (s != null) {
            s.close();
        }
    }
}
