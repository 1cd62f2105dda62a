package dev.sluice;

import dev.sluice.internal.catalog.Names;
import dev.sluice.internal.jdbc.DatabaseUrls;
import dev.sluice.internal.jdbc.Identifiers;
import dev.sluice.internal.schema.SchemaSteps;
import java.util.List;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * A Sluice client: one installation schema in one PostgreSQL database, reached through the caller's
 * {@link DataSource} (HikariCP recommended). Building a client does no I/O; handles
 * ({@link #stream(String)}, {@link #system()}) do no I/O either.
 *
 * <pre>{@code
 * Sluice sluice = Sluice.builder().dataSource(ds).schema("sluice").build();
 * sluice.stream("orders").register(StreamConfig.defaults());
 * }</pre>
 */
public final class Sluice implements AutoCloseable {
    /** The default installation schema. */
    public static final String DEFAULT_SCHEMA = "sluice";
    /** Default lease of a fleet instance ({@link Builder#fleetLease}). */
    public static final java.time.Duration DEFAULT_FLEET_LEASE = java.time.Duration.ofSeconds(30);
    /** Default interval of the manager's maintenance passes ({@link Builder#maintenanceInterval}). */
    public static final java.time.Duration DEFAULT_MAINTENANCE_INTERVAL = java.time.Duration.ofSeconds(60);
    /** Default retention of instance snapshots past their expiry ({@link Builder#instanceLogRetention}). */
    public static final java.time.Duration DEFAULT_INSTANCE_LOG_RETENTION = java.time.Duration.ofHours(24);
    /** Default interval of the gauges' refresh ({@link Builder#meterRefresh}). */
    public static final java.time.Duration DEFAULT_METER_REFRESH = java.time.Duration.ofSeconds(15);

    private final String schema;
    private final boolean allowDestroy;
    private final boolean migrate;
    private final String clientId;
    /** What the client is made of (stores, session, runtime, tracking); the handles delegate to it. */
    private final dev.sluice.internal.Engine engine;

    private Sluice(Builder b) {
        this.schema = b.schema;
        this.allowDestroy = b.allowDestroy;
        this.migrate = b.migrate;
        this.clientId = b.clientId;
        // Schedule fires to streams go through this client's own producers (one per stream and content type).
        this.engine = new dev.sluice.internal.Engine(b.dataSource, schema, clientId, migrate, b.forceSchema, b.steps,
                b.schedulerThreads, b.handlerThreads,
                (stream, serde) -> stream(stream).producer(ProducerConfig.defaults().withSerde(serde)),
                new dev.sluice.internal.Engine.Settings(b.maintenance, b.fleetLease, b.maintenanceInterval, b.instanceLogRetention,
                        b.meterRefresh, dev.sluice.internal.tracing.Tracing.of(b.openTelemetry, b.consumerSpans), b.ambient),
                dev.sluice.internal.metrics.Meters.of(b.meterRegistry));
    }

    /** A builder for a client. */
    public static Builder builder() {
        return new Builder();
    }

    /** The installation schema. */
    public String schema() {
        return schema;
    }

    /** Whether this client may destroy streams. */
    public boolean allowDestroy() {
        return allowDestroy;
    }

    /** Whether registration may migrate an older schema. */
    public boolean migrate() {
        return migrate;
    }

    /** The identity this client records in logs and ledgers ({@code declared_by}, {@code applied_by}). */
    public String clientId() {
        return clientId;
    }

    /** The control plane of the schema (a handle; no I/O). */
    public SluiceSystem system() {
        return new SluiceSystem(this);
    }

    /** An untyped stream handle whose payloads are raw bytes (no I/O, cannot fail). */
    public Stream<byte[]> stream(String name) {
        return new Stream<>(this, name, byte[].class);
    }

    /** A typed stream handle (no I/O, cannot fail). */
    public <T> Stream<T> stream(String name, Class<T> payloadType) {
        return new Stream<>(this, name, Objects.requireNonNull(payloadType, "payloadType"));
    }

    /** An untyped job queue handle whose payloads are raw bytes (no I/O, cannot fail); see {@link Queue}. */
    public Queue<byte[]> queue(String name) {
        return new Queue<>(this, name, byte[].class, QueueOptions.defaults());
    }

    /** A typed job queue handle with the default {@link QueueOptions} (no I/O, cannot fail). */
    public <T> Queue<T> queue(String name, Class<T> payloadType) {
        return queue(name, payloadType, QueueOptions.defaults());
    }

    /** A typed job queue handle that stamps {@code options} on the jobs it enqueues (no I/O, cannot fail). */
    public <T> Queue<T> queue(String name, Class<T> payloadType, QueueOptions options) {
        return new Queue<>(this, name, Objects.requireNonNull(payloadType, "payloadType"),
                Objects.requireNonNull(options, "options"));
    }

    /** A handle on a named TTL lock (no I/O, cannot fail); see {@link Lock}. */
    public Lock lock(String name) {
        return new Lock(this, name);
    }

    /**
     * Starts contending for leadership on the lock {@code name} (non-blocking); see {@link Leadership}.
     * Close it (or the client) to step down and release the lock.
     *
     * @param ttl the lock's TTL: renewed every third of it while leading; a crashed leader is replaced
     *            within about one TTL (at least 300 ms)
     * @throws SluiceException {@link ErrorCode#INVALID_NAME}, {@link ErrorCode#INVALID_LOCK_OPTIONS} before any
     *                         round trip; {@link ErrorCode#SYSTEM_NOT_REGISTERED} without a control plane when the client
     *                         may not migrate (otherwise the first use installs it)
     */
    public Leadership leader(String name, java.time.Duration ttl, LeaderListener listener) {
        Names.validate("lock", name);
        Objects.requireNonNull(ttl, "ttl");
        Objects.requireNonNull(listener, "listener");
        return engine.lead(name, ttl, listener);
    }

    /** A handle on a named schedule (no I/O, cannot fail); see {@link Schedule}. */
    public Schedule schedule(String name) {
        return new Schedule(this, name);
    }

    /** Every schedule of the schema, by name; empty when the control plane is not installed. */
    public List<ScheduleInfo> schedules() {
        return engine.scheduleStore().list();
    }

    /**
     * Starts a schedule runner in this process (non-blocking); see {@link ScheduleRunner}. Run one per process
     * that should fire schedules: any number share the work and each due time fires exactly once. Close it (or
     * the client) to stop it.
     *
     * @throws SluiceException {@link ErrorCode#SYSTEM_NOT_REGISTERED} without a control plane when the client may
     *                         not migrate (otherwise the first use installs it), {@link ErrorCode#DATABASE_OLDER}
     *                         when it needs {@code sluice migrate up}
     */
    public ScheduleRunner runSchedules() {
        return engine.runSchedules();
    }

    /** Every stream of the schema, by name; empty when the control plane is not installed. */
    public List<StreamInfo> streams() {
        return engine.streamCatalog().list();
    }

    /**
     * Every queue that has live or dead jobs, by name, with its counts (queues are rows, not a registry;
     * one grouped scan of the job tables, so an operator read); empty when the control plane is not installed.
     */
    public List<QueueInfo> queues() {
        return engine.controlPlaneInstalled() ? engine.jobStore().listing().queues() : List.of();
    }

    /** Every TTL lock of the schema by name, held or not; empty when the control plane is not installed. */
    public List<LockInfo> locks() {
        return engine.controlPlaneInstalled() ? engine.lockStore().list() : List.of();
    }

    /** The worker fleet of the schema: workers, their live instances, targets (a handle; no I/O). */
    public Fleet fleet() {
        return new Fleet(engine);
    }

    /** The schema's maintenance: run a pass now, who the manager is, each sweep's last run (a handle; no I/O). */
    public Maintenance maintenance() {
        return new Maintenance(engine);
    }

    /** The schema's API tokens: create, list, revoke, authenticate (a handle; no I/O); see {@link Tokens}. */
    public Tokens tokens() {
        return new Tokens(engine);
    }

    /** Operator access to migrations. */
    public Migrations migrations() {
        return new Migrations(engine.migrationAdmin());
    }

    /** The composition root the handles delegate to. */
    dev.sluice.internal.Engine engine() {
        return engine;
    }

    /** How many started parts the client holds (for tests). */
    int tracked() {
        return engine.tracked();
    }

    /**
     * Closes every producer (flushing queued messages), consumption, queue worker (draining it) and
     * leadership (releasing its lock), and stops background work. The caller's DataSource is not closed.
     */
    @Override
    public void close() {
        engine.close();
    }

    /** Validates a user-chosen name as Sluice does, without any I/O. */
    public static String validateName(String kind, String name) {
        return Names.validate(kind, name);
    }

    /** Builds a {@link Sluice} client. */
    public static final class Builder {
        private DataSource dataSource;
        private String schema = DEFAULT_SCHEMA;
        private boolean allowDestroy;
        private boolean migrate = true;
        private boolean forceSchema;
        private String clientId = defaultClientId();
        private SchemaSteps steps = SchemaSteps.RELEASED;
        private int schedulerThreads = dev.sluice.internal.runtime.ClientRuntime.DEFAULT_SCHEDULER_THREADS;
        private int handlerThreads = dev.sluice.internal.runtime.ClientRuntime.DEFAULT_HANDLER_THREADS;
        private boolean maintenance = true;
        private java.time.Duration fleetLease = DEFAULT_FLEET_LEASE;
        private java.time.Duration maintenanceInterval = DEFAULT_MAINTENANCE_INTERVAL;
        private java.time.Duration instanceLogRetention = DEFAULT_INSTANCE_LOG_RETENTION;
        /** An {@code io.micrometer.core.instrument.MeterRegistry}, or null: typed Object so no Micrometer class loads without one. */
        private Object meterRegistry;
        private java.time.Duration meterRefresh = DEFAULT_METER_REFRESH;
        private AmbientTransaction ambient = AmbientTransaction.NONE;
        /** An {@code io.opentelemetry.api.OpenTelemetry}, or null: typed Object so no OpenTelemetry class loads without one. */
        private Object openTelemetry;
        private SpanRelation consumerSpans = SpanRelation.CHILD;

        private Builder() {
        }

        /** Test hook: the migration steps this client believes in (default: the released ones). */
        Builder schemaSteps(SchemaSteps steps) {
            this.steps = Objects.requireNonNull(steps, "steps");
            return this;
        }

        /** The data source to use (required unless {@link #jdbcUrl} is given). */
        public Builder dataSource(DataSource dataSource) {
            this.dataSource = dataSource;
            return this;
        }

        /**
         * Uses a simple non-pooling data source for this URL (fine for tools; pool for services):
         * {@code jdbc:postgresql://host[:port]/database?user=...}, or a {@code postgres://user:password@host/database}
         * URL (converted). Connect and login time out after 10 s, a statement's socket read after 5 min, and
         * TCP keep-alive is on, unless the URL sets {@code connectTimeout}, {@code loginTimeout},
         * {@code socketTimeout} or {@code tcpKeepAlive} itself.
         *
         * @throws SluiceException {@link ErrorCode#INVALID_DATABASE_URL} (the message never shows the password)
         */
        public Builder jdbcUrl(String url) {
            this.dataSource = DatabaseUrls.dataSource(url);
            return this;
        }

        /** The installation schema (default {@code sluice}); must match {@code ^[a-z_][a-z0-9_]{0,62}$}. */
        public Builder schema(String schema) {
            this.schema = schema;
            return this;
        }

        /** Whether this client may destroy streams (default false). */
        public Builder allowDestroy(boolean allowDestroy) {
            this.allowDestroy = allowDestroy;
            return this;
        }

        /**
         * Whether registration may migrate an older schema (default true). With false, an older schema
         * is refused with {@link ErrorCode#DATABASE_OLDER} until {@code sluice migrate up} runs.
         */
        public Builder migrate(boolean migrate) {
            this.migrate = migrate;
            return this;
        }

        /**
         * Whether the first install may put Sluice's tables into a schema that already holds other objects
         * and no Sluice installation (default false: refused with {@link ErrorCode#SCHEMA_NOT_SLUICE}, nothing
         * changed). An empty schema, or one that holds Sluice already, needs no forcing.
         */
        public Builder forceSchema(boolean forceSchema) {
            this.forceSchema = forceSchema;
            return this;
        }

        /** The identity recorded in logs (default {@code host:pid}). */
        public Builder clientId(String clientId) {
            this.clientId = Objects.requireNonNull(clientId, "clientId");
            return this;
        }

        /**
         * The client's shared threads (defaults 4 and 64): {@code scheduler} threads run every consumer's and
         * worker's poll loop and periodic tasks (lease renewal, heartbeats) as short tasks; {@code handlers}
         * threads run the handlers of every consumption and worker that has no executor of its own
         * ({@link ConsumeOptions#executor}), each still bounded by its own {@code concurrency}. Threads do not
         * grow with the number of groups or queues; idle handler threads retire after a minute.
         *
         * @throws SluiceException {@link ErrorCode#INVALID_CONFIG} when either is below 1 or above 1,024
         */
        public Builder runtimeThreads(int scheduler, int handlers) {
            if (scheduler < 1 || scheduler > 1024 || handlers < 1 || handlers > 1024) {
                throw new SluiceException(ErrorCode.INVALID_CONFIG, "runtime threads must be between 1 and 1024 (scheduler "
                        + scheduler + ", handlers " + handlers + ")");
            }
            this.schedulerThreads = scheduler;
            this.handlerThreads = handlers;
            return this;
        }

        /**
         * Whether this client competes for the schema's manager (default true): the one elected manager runs the
         * maintenance passes — the janitor (retention, TTL sweeps, partitions ahead), the queues' rescue, expiry
         * and dead-job retention, the cleanup of expired fleet instances, metric snapshots. A client competes once
         * it starts its first running part (producer, consumption, worker, schedule runner, leadership); when the
         * holder closes or dies another competing client takes over within one {@link #fleetLease}. Turn it off for
         * short-lived tools; {@code sluice.maintenance().runOnce()} still runs a pass on demand.
         */
        public Builder maintenance(boolean maintenance) {
            this.maintenance = maintenance;
            return this;
        }

        /**
         * How often the elected manager runs a maintenance pass (default 60 s; 100 ms to 1 h). The first pass runs
         * one interval after this client became the manager.
         *
         * @throws SluiceException {@link ErrorCode#INVALID_CONFIG} outside the range
         */
        public Builder maintenanceInterval(java.time.Duration interval) {
            this.maintenanceInterval = within("maintenanceInterval", interval, java.time.Duration.ofMillis(100),
                    java.time.Duration.ofHours(1));
            return this;
        }

        /**
         * How long a fleet instance (each consumption, queue worker, schedule runner and the manager candidacy)
         * stays live without a heartbeat (default 30 s; 300 ms to 10 min). The client renews all its instances in
         * one statement every third of it; a killed process's capped or paused work is taken over, and its
         * manager role, within about one lease.
         *
         * @throws SluiceException {@link ErrorCode#INVALID_CONFIG} outside the range
         */
        public Builder fleetLease(java.time.Duration lease) {
            this.fleetLease = within("fleetLease", lease, java.time.Duration.ofMillis(300), java.time.Duration.ofMinutes(10));
            return this;
        }

        /**
         * How long the manager keeps instance snapshots ({@code worker_instance_log}) past their recorded expiry
         * (default 24 h; 1 s to 365 days).
         *
         * @throws SluiceException {@link ErrorCode#INVALID_CONFIG} outside the range
         */
        public Builder instanceLogRetention(java.time.Duration retention) {
            this.instanceLogRetention = within("instanceLogRetention", retention, java.time.Duration.ofSeconds(1),
                    java.time.Duration.ofDays(365));
            return this;
        }

        /**
         * Registers this client's meters in {@code registry} (docs/metrics.md): counters of produced messages
         * ({@code sluice.produce.messages}, {@code sluice.produce.duplicates}), of deliveries by outcome
         * ({@code sluice.deliveries}) and of job attempts by outcome ({@code sluice.jobs}); handler timers with percentile
         * histograms ({@code sluice.handler}, {@code sluice.job.handler}); claim timers ({@code sluice.claim},
         * {@code sluice.job.claim}) and the produce batch sizes ({@code sluice.produce.batch}); and gauges of every group's lag, backlog and dead
         * letters and every queue's jobs by state ({@code sluice.consumer.lag.messages},
         * {@code sluice.consumer.backlog.messages}, {@code sluice.dead.letters}, {@code sluice.queue.jobs}), refreshed every
         * {@link #meterRefresh} by one statement for the whole schema on the client's shared scheduler (scheduled when the
         * client is built; its reads never run in {@code build()}). Without a registry (the default) nothing is measured
         * and Micrometer need not be on the classpath.
         */
        public Builder meterRegistry(io.micrometer.core.instrument.MeterRegistry registry) {
            this.meterRegistry = Objects.requireNonNull(registry, "registry");
            return this;
        }

        /**
         * How often the gauges read their figures when a {@link #meterRegistry} is given (default 15 s; 100 ms to 1 h).
         * The figures are the manager's metric snapshots, taken every {@link #maintenanceInterval}.
         *
         * @throws SluiceException {@link ErrorCode#INVALID_CONFIG} outside the range
         */
        public Builder meterRefresh(java.time.Duration every) {
            this.meterRefresh = within("meterRefresh", every, java.time.Duration.ofMillis(100), java.time.Duration.ofHours(1));
            return this;
        }

        /**
         * Where produce and enqueue find the transaction the calling thread is in, to join it (default
         * {@link AmbientTransaction#NONE}: they always run in transactions of their own). With one, a message or job
         * produced inside the caller's transaction commits or rolls back with it; see {@link AmbientTransaction}.
         */
        public Builder ambientTransaction(AmbientTransaction ambient) {
            this.ambient = Objects.requireNonNull(ambient, "ambient");
            return this;
        }

        /**
         * Traces through {@code openTelemetry} (docs/tracing.md): a produce or enqueue made while a span is current writes
         * that span's context into the message's or job's headers (W3C {@code traceparent} and {@code tracestate} with the
         * usual propagators; a header the caller set itself is kept), and every delivery and job attempt runs its handler
         * in a {@code CONSUMER} span {@code process <stream or queue>} related to it as {@link #consumerSpans} says, with
         * the messaging attributes ({@code messaging.system = sluice}, destination, message id, group, attempt, outcome).
         * Without it (the default) nothing is traced and OpenTelemetry need not be on the classpath.
         */
        public Builder openTelemetry(io.opentelemetry.api.OpenTelemetry openTelemetry) {
            this.openTelemetry = Objects.requireNonNull(openTelemetry, "openTelemetry");
            return this;
        }

        /**
         * How a handler's span relates to the producer's context read from the headers (default
         * {@link SpanRelation#CHILD}: one trace spans producer and consumer; {@link SpanRelation#LINK}: a new trace with
         * a link to the producer's span). Used with {@link #openTelemetry}.
         */
        public Builder consumerSpans(SpanRelation relation) {
            this.consumerSpans = Objects.requireNonNull(relation, "relation");
            return this;
        }

        private static java.time.Duration within(String what, java.time.Duration d, java.time.Duration min,
                                                 java.time.Duration max) {
            if (d == null || d.compareTo(min) < 0 || d.compareTo(max) > 0) {
                throw new SluiceException(ErrorCode.INVALID_CONFIG, what + " must be between " + min + " and " + max
                        + " (got " + d + ")");
            }
            return d;
        }

        /** Validates the settings (no I/O) and builds the client. */
        public Sluice build() {
            if (dataSource == null) {
                throw new SluiceException(ErrorCode.INVALID_CONFIG, "a DataSource (or JDBC URL) is required");
            }
            Identifiers.validateSchema(schema);
            return new Sluice(this);
        }

        private static String defaultClientId() {
            String host;
            try {
                host = java.net.InetAddress.getLocalHost().getHostName();
            } catch (java.io.IOException e) {
                host = "unknown-host";
            }
            return host + ":" + ProcessHandle.current().pid();
        }
    }
}
