package dev.sluice.spring;

import dev.sluice.Sluice;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The {@link Sluice} client over the application's DataSource, configured by {@code sluice.*}
 * ({@link SluiceProperties}), joining Spring-managed transactions ({@link SpringAmbientTransaction}) and adjusted by
 * every {@link SluiceBuilderCustomizer}. Backs off when the application defines its own {@link Sluice} bean.
 */
@AutoConfiguration(after = DataSourceAutoConfiguration.class)
@ConditionalOnClass(Sluice.class)
@EnableConfigurationProperties(SluiceProperties.class)
public class SluiceAutoConfiguration {
    /** Used by Spring. */
    public SluiceAutoConfiguration() {
    }

    /**
     * The client. The DataSource it is given is the raw pool ({@link SpringAmbientTransaction#unwrap}), the key Spring's
     * transaction managers bind connections by. Built without I/O: the schema is installed or checked on first use.
     */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnSingleCandidate(DataSource.class)
    public Sluice sluice(DataSource dataSource, SluiceProperties properties, ObjectProvider<SluiceBuilderCustomizer> customizers) {
        DataSource raw = SpringAmbientTransaction.unwrap(dataSource);
        SluiceRuntimeProperties runtime = properties.getRuntime();
        Sluice.Builder b = Sluice.builder().dataSource(raw).schema(properties.getSchema()).migrate(properties.isAutoMigrate())
                .maintenance(properties.getMaintenance().isEnabled())
                .maintenanceInterval(properties.getMaintenance().getInterval())
                .runtimeThreads(runtime.getSchedulerThreads(), runtime.getHandlerThreads())
                .ambientTransaction(new SpringAmbientTransaction(raw));
        if (properties.getClientId() != null && !properties.getClientId().isBlank()) {
            b.clientId(properties.getClientId());
        }
        customizers.orderedStream().forEach(c -> c.customize(b));
        return b.build();
    }

    /** Hands the application's Micrometer registry to the client, when Micrometer is on the classpath. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.micrometer.core.instrument.MeterRegistry")
    static class Metrics {
        /** Sets the single MeterRegistry bean, if there is one, on the builder (before the user's customizers run). */
        @Bean
        @ConditionalOnMissingBean(name = "sluiceMeterRegistryCustomizer")
        SluiceBuilderCustomizer sluiceMeterRegistryCustomizer(
                ObjectProvider<io.micrometer.core.instrument.MeterRegistry> registry) {
            return new MeterRegistryCustomizer(registry);
        }
    }

    /** Hands the application's OpenTelemetry to the client, when the OpenTelemetry API is on the classpath. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.opentelemetry.api.OpenTelemetry")
    static class Tracing {
        /** Sets the single OpenTelemetry bean, if there is one, and sluice.tracing.consumer-spans on the builder. */
        @Bean
        @ConditionalOnMissingBean(name = "sluiceOpenTelemetryCustomizer")
        SluiceBuilderCustomizer sluiceOpenTelemetryCustomizer(ObjectProvider<io.opentelemetry.api.OpenTelemetry> otel,
                                                              SluiceProperties properties) {
            return new OpenTelemetryCustomizer(otel, properties.getTracing().getConsumerSpans());
        }
    }

    /** Ordered first, so a user's customizer may still replace it. */
    static final class OpenTelemetryCustomizer implements SluiceBuilderCustomizer, org.springframework.core.Ordered {
        private final ObjectProvider<io.opentelemetry.api.OpenTelemetry> otel;
        private final dev.sluice.SpanRelation relation;

        OpenTelemetryCustomizer(ObjectProvider<io.opentelemetry.api.OpenTelemetry> otel, dev.sluice.SpanRelation relation) {
            this.otel = otel;
            this.relation = relation;
        }

        @Override
        public void customize(Sluice.Builder builder) {
            io.opentelemetry.api.OpenTelemetry o = otel.getIfUnique();
            if (o != null) {
                builder.openTelemetry(o).consumerSpans(relation == null ? dev.sluice.SpanRelation.CHILD : relation);
            }
        }

        @Override
        public int getOrder() {
            return org.springframework.core.Ordered.HIGHEST_PRECEDENCE;
        }
    }

    /** Ordered first, so a user's customizer may still replace the registry. */
    static final class MeterRegistryCustomizer implements SluiceBuilderCustomizer, org.springframework.core.Ordered {
        private final ObjectProvider<io.micrometer.core.instrument.MeterRegistry> registry;

        MeterRegistryCustomizer(ObjectProvider<io.micrometer.core.instrument.MeterRegistry> registry) {
            this.registry = registry;
        }

        @Override
        public void customize(Sluice.Builder builder) {
            io.micrometer.core.instrument.MeterRegistry r = registry.getIfUnique();
            if (r != null) {
                builder.meterRegistry(r);
            }
        }

        @Override
        public int getOrder() {
            return org.springframework.core.Ordered.HIGHEST_PRECEDENCE;
        }
    }
}
