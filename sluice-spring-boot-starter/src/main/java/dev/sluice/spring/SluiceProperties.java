package dev.sluice.spring;

import java.nio.file.Path;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;

/**
 * The {@code sluice.*} properties. Names follow the library's builder and option records
 * ({@code Sluice.builder().schema(...)}, {@code ConsumeOptions.batchSize}, {@code WorkOptions.prefetch}, …) so one
 * vocabulary serves code, configuration and docs. Values are checked by the library when the context starts: an
 * out-of-range one fails startup with its coded {@link dev.sluice.SluiceException}.
 */
@ConfigurationProperties(prefix = "sluice")
public class SluiceProperties {
    /** Database schema of the installation (Sluice.builder().schema). */
    private String schema = "sluice";

    /** Whether the client installs and migrates the schema by itself (Sluice.builder().migrate). */
    private boolean autoMigrate = true;

    /** Identity of this client in the fleet and in claims; unset means host:pid. */
    private String clientId;

    /** Client runtime threads: handler threads shared by every consumption and worker, and scheduler threads. */
    @NestedConfigurationProperty
    private final SluiceRuntimeProperties runtime = new SluiceRuntimeProperties();

    /** The manager's maintenance (retention, partitions, metric snapshots). */
    private final Maintenance maintenance = new Maintenance();

    /** Defaults of every @SluiceListener consumption (ConsumeOptions). */
    @NestedConfigurationProperty
    private final SluiceConsumerProperties consumer = new SluiceConsumerProperties();

    /** Defaults of every @SluiceJob worker (WorkOptions). */
    @NestedConfigurationProperty
    private final SluiceWorkerProperties worker = new SluiceWorkerProperties();

    /** Annotated listeners and jobs. */
    private final Listeners listeners = new Listeners();

    /** The sluice health indicator. */
    private final Health health = new Health();

    /** The HTTP server of sluice-server (only when it is on the classpath). */
    @NestedConfigurationProperty
    private final SluiceServerProperties server = new SluiceServerProperties();

    /** The embedded PostgreSQL fallback (only when sluice-embedded is on the classpath). */
    private final Embedded embedded = new Embedded();

    /** How handler spans relate to the producer's trace, when the application has an OpenTelemetry bean. */
    private final Tracing tracing = new Tracing();

    /** @return the schema */
    public String getSchema() {
        return schema;
    }

    /** @param schema the schema */
    public void setSchema(String schema) {
        this.schema = schema;
    }

    /** @return whether the client migrates */
    public boolean isAutoMigrate() {
        return autoMigrate;
    }

    /** @param autoMigrate whether the client migrates */
    public void setAutoMigrate(boolean autoMigrate) {
        this.autoMigrate = autoMigrate;
    }

    /** @return the client id, or null for host:pid */
    public String getClientId() {
        return clientId;
    }

    /** @param clientId the client id */
    public void setClientId(String clientId) {
        this.clientId = clientId;
    }

    /** @return the runtime threads */
    public SluiceRuntimeProperties getRuntime() {
        return runtime;
    }

    /** @return the maintenance settings */
    public Maintenance getMaintenance() {
        return maintenance;
    }

    /** @return the consumer defaults */
    public SluiceConsumerProperties getConsumer() {
        return consumer;
    }

    /** @return the worker defaults */
    public SluiceWorkerProperties getWorker() {
        return worker;
    }

    /** @return the listener settings */
    public Listeners getListeners() {
        return listeners;
    }

    /** @return the health settings */
    public Health getHealth() {
        return health;
    }

    /** @return the server settings */
    public SluiceServerProperties getServer() {
        return server;
    }

    /** @return the embedded-database settings */
    public Embedded getEmbedded() {
        return embedded;
    }

    /** {@code sluice.maintenance.*}. */
    public static class Maintenance {
        /** Whether this client takes part in the manager election and runs maintenance (Sluice.builder().maintenance). */
        private boolean enabled = true;

        /** How often the elected manager runs maintenance and takes metric snapshots. */
        private Duration interval = Duration.ofSeconds(60);

        /** @return whether maintenance runs */
        public boolean isEnabled() {
            return enabled;
        }

        /** @param enabled whether maintenance runs */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /** @return the interval */
        public Duration getInterval() {
            return interval;
        }

        /** @param interval the interval */
        public void setInterval(Duration interval) {
            this.interval = interval;
        }
    }

    /** {@code sluice.listeners.*}. */
    public static class Listeners {
        /** Whether @SluiceListener and @SluiceJob methods are started with the context (they are always checked). */
        private boolean enabled = true;

        /** @return whether listeners start */
        public boolean isEnabled() {
            return enabled;
        }

        /** @param enabled whether listeners start */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }

    /** {@code sluice.health.*}. */
    public static class Health {
        /** A consumer group whose lag (messages, from the manager's snapshots) is above this is reported DEGRADED. */
        private long lagThreshold = 10_000;

        /** How long the database check may take before the indicator reports DOWN. */
        private Duration timeout = Duration.ofSeconds(2);

        /** @return the lag threshold */
        public long getLagThreshold() {
            return lagThreshold;
        }

        /** @param lagThreshold the lag threshold */
        public void setLagThreshold(long lagThreshold) {
            this.lagThreshold = lagThreshold;
        }

        /** @return the timeout */
        public Duration getTimeout() {
            return timeout;
        }

        /** @param timeout the timeout */
        public void setTimeout(Duration timeout) {
            this.timeout = timeout;
        }
    }

    /** @return the tracing settings */
    public Tracing getTracing() {
        return tracing;
    }

    /** {@code sluice.tracing.*}. */
    public static class Tracing {
        /**
         * How each delivery's and job attempt's span relates to the context in the message's headers: child (one trace
         * spans producer and consumer) or link (a new trace linked to the producer's span).
         */
        private dev.sluice.SpanRelation consumerSpans = dev.sluice.SpanRelation.CHILD;

        /** @return the relation */
        public dev.sluice.SpanRelation getConsumerSpans() {
            return consumerSpans;
        }

        /** @param consumerSpans the relation */
        public void setConsumerSpans(dev.sluice.SpanRelation consumerSpans) {
            this.consumerSpans = consumerSpans;
        }
    }

    /** {@code sluice.embedded.*}. */
    public static class Embedded {
        /**
         * Start an embedded PostgreSQL (sluice-embedded) as the application's DataSource when no DataSource bean and
         * no spring.datasource.url is configured.
         */
        private boolean enabled = false;

        /** Data directory of the embedded server (kept across restarts); unset means a temporary one. */
        private Path dataDirectory;

        /** Port of the embedded server; 0 picks a free one. */
        private int port = 0;

        /** @return whether the fallback is on */
        public boolean isEnabled() {
            return enabled;
        }

        /** @param enabled whether the fallback is on */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /** @return the data directory, or null */
        public Path getDataDirectory() {
            return dataDirectory;
        }

        /** @param dataDirectory the data directory */
        public void setDataDirectory(Path dataDirectory) {
            this.dataDirectory = dataDirectory;
        }

        /** @return the port */
        public int getPort() {
            return port;
        }

        /** @param port the port */
        public void setPort(int port) {
            this.port = port;
        }
    }
}
