package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.ErrorCode;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;

/** Properties bind, invalid ones fail startup with their code, and everything backs off for the user's beans. */
class SluiceAutoConfigurationTest {
    static final String SCHEMA = TestDb.freshSchema("autoconf");

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, SluiceEmbeddedAutoConfiguration.class,
                    SluiceAutoConfiguration.class, SluiceListenerAutoConfiguration.class, SluiceActuatorAutoConfiguration.class,
                    SluiceServerAutoConfiguration.class))
            .withPropertyValues(TestDb.properties(SCHEMA));

    @Test
    void propertiesBindToTheClientAndTheDefaults() {
        runner.withPropertyValues("sluice.client-id=billing-1", "sluice.auto-migrate=false", "sluice.maintenance.enabled=false",
                "sluice.maintenance.interval=5s", "sluice.consumer.batch-size=7", "sluice.consumer.lease-timeout=2s",
                "sluice.worker.prefetch=3", "sluice.health.lag-threshold=42").run(ctx -> {
            assertThat(ctx).hasNotFailed().hasSingleBean(Sluice.class).hasSingleBean(SluiceListenerContainer.class)
                    .hasSingleBean(SluiceHealthIndicator.class).hasSingleBean(SluiceInfoContributor.class);
            Sluice s = ctx.getBean(Sluice.class);
            assertThat(s.schema()).isEqualTo(SCHEMA);
            assertThat(s.clientId()).isEqualTo("billing-1");
            assertThat(s.migrate()).isFalse();
            SluiceProperties p = ctx.getBean(SluiceProperties.class);
            assertThat(p.getConsumer().toOptions().batchSize()).isEqualTo(7);
            assertThat(p.getConsumer().toOptions().leaseTimeout()).isEqualTo(Duration.ofSeconds(2));
            assertThat(p.getWorker().toOptions().prefetch()).isEqualTo(3);
            assertThat(p.getHealth().getLagThreshold()).isEqualTo(42);
            assertThat(p.getMaintenance().getInterval()).isEqualTo(Duration.ofSeconds(5));
        });
    }

    @Test
    void theDefaultsAreTheLibrarys() {
        runner.run(ctx -> {
            SluiceProperties p = ctx.getBean(SluiceProperties.class);
            assertThat(p.getConsumer().toOptions()).isEqualTo(dev.sluice.ConsumeOptions.defaults());
            assertThat(p.getWorker().toOptions()).isEqualTo(dev.sluice.WorkOptions.defaults());
            assertThat(p.getMaintenance().getInterval()).isEqualTo(Sluice.DEFAULT_MAINTENANCE_INTERVAL);
            assertThat(ctx.getBean(Sluice.class).schema()).isEqualTo(SCHEMA);
        });
    }

    @Test
    void outOfRangeValuesFailStartupWithTheirCode() {
        runner.withPropertyValues("sluice.consumer.batch-size=0").run(ctx ->
                assertThat(code(ctx.getStartupFailure())).isEqualTo(ErrorCode.INVALID_CONFIG));
        runner.withPropertyValues("sluice.worker.concurrency=0").run(ctx ->
                assertThat(code(ctx.getStartupFailure())).isEqualTo(ErrorCode.INVALID_QUEUE_OPTIONS));
        runner.withPropertyValues("sluice.schema=Not-A-Schema").run(ctx ->
                assertThat(code(ctx.getStartupFailure())).isEqualTo(ErrorCode.INVALID_SCHEMA_NAME));
        runner.withPropertyValues("sluice.maintenance.interval=1ms").run(ctx ->
                assertThat(code(ctx.getStartupFailure())).isEqualTo(ErrorCode.INVALID_CONFIG));
        runner.withPropertyValues("sluice.health.timeout=0s").run(ctx ->
                assertThat(code(ctx.getStartupFailure())).isEqualTo(ErrorCode.INVALID_CONFIG));
    }

    @Test
    void aUsersOwnSluiceBeanWinsAndTheListenersUseIt() {
        runner.withUserConfiguration(OwnSluice.class).run(ctx -> {
            assertThat(ctx).hasNotFailed().hasSingleBean(Sluice.class);
            assertThat(ctx.getBean(Sluice.class).clientId()).isEqualTo("mine");
            assertThat(ctx).hasSingleBean(SluiceListenerContainer.class);
        });
    }

    @Test
    void usersBeansOfEveryKindWin() {
        runner.withUserConfiguration(OwnBeans.class).run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertThat(ctx.getBean(SluiceListenerContainer.class)).isSameAs(ctx.getBean(OwnBeans.class).container);
            assertThat(ctx.getBean("sluiceHealthIndicator")).isSameAs(ctx.getBean(OwnBeans.class).health);
        });
    }

    @Test
    void withoutADataSourceNothingIsConfigured() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class,
                SluiceListenerAutoConfiguration.class, SluiceActuatorAutoConfiguration.class)).run(ctx -> {
            assertThat(ctx).hasNotFailed().doesNotHaveBean(Sluice.class).doesNotHaveBean(SluiceListenerContainer.class)
                    .doesNotHaveBean(SluiceHealthIndicator.class);
        });
    }

    @Test
    void customizersRunInOrderAfterTheProperties() {
        runner.withPropertyValues("sluice.client-id=from-properties").withUserConfiguration(Customizers.class).run(ctx ->
                assertThat(ctx.getBean(Sluice.class).clientId()).isEqualTo("second"));
    }

    @Test
    void aTransactionAwareProxyIsUnwrappedSoTheLookupKeyIsThePool() {
        DataSource raw = new DriverManagerDataSource(TestDb.url());
        TransactionAwareDataSourceProxy proxy = new TransactionAwareDataSourceProxy(raw);
        assertThat(new SpringAmbientTransaction(proxy).dataSource()).isSameAs(raw);
        assertThat(new SpringAmbientTransaction(new TransactionAwareDataSourceProxy(proxy)).dataSource()).isSameAs(raw);
        // Outside a transaction there is nothing to join.
        assertThat(new SpringAmbientTransaction(raw).current()).isNull();
    }

    @Test
    void listenersCanBeSwitchedOff() {
        runner.withPropertyValues("sluice.listeners.enabled=false").run(ctx -> {
            SluiceListenerContainer c = ctx.getBean(SluiceListenerContainer.class);
            assertThat(c.status()).isEmpty();
        });
    }

    @Test
    void theServerStartsOnlyWhenEnabled() {
        runner.run(ctx -> assertThat(ctx).doesNotHaveBean(dev.sluice.server.SluiceServer.class));
        runner.withPropertyValues("sluice.server.enabled=true", "sluice.server.port=0").run(ctx -> {
            assertThat(ctx).hasNotFailed().hasSingleBean(dev.sluice.server.SluiceServer.class);
            assertThat(ctx.getBean(dev.sluice.server.SluiceServer.class).port()).isPositive();
        });
    }

    @Test
    void theEmbeddedFallbackBacksOffWhenAUrlIsConfigured() {
        runner.withPropertyValues("sluice.embedded.enabled=true").run(ctx ->
                assertThat(ctx).hasNotFailed().doesNotHaveBean(dev.sluice.embedded.EmbeddedPostgresServer.class));
    }

    @Test
    void theEmbeddedFallbackStartsADatabaseWhenNoneIsConfigured() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                SluiceEmbeddedAutoConfiguration.class, SluiceAutoConfiguration.class))
                .withPropertyValues("sluice.embedded.enabled=true").run(ctx -> {
                    assertThat(ctx).hasNotFailed().hasSingleBean(dev.sluice.embedded.EmbeddedPostgresServer.class);
                    Sluice s = ctx.getBean(Sluice.class);
                    assertThat(s.system().register().schema()).isEqualTo("sluice");
                });
    }

    @Test
    void theConfigurationMetadataNamesThePropertiesWithDescriptionsAndDefaults() throws Exception {
        try (InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            assertThat(in).isNotNull();
            String json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            for (String name : new String[] {"sluice.schema", "sluice.auto-migrate", "sluice.client-id", "sluice.maintenance.enabled",
                    "sluice.maintenance.interval", "sluice.consumer.concurrency", "sluice.consumer.batch-size",
                    "sluice.consumer.lease-timeout", "sluice.worker.concurrency", "sluice.worker.prefetch",
                    "sluice.health.lag-threshold", "sluice.server.enabled", "sluice.server.port", "sluice.listeners.enabled",
                    "sluice.embedded.enabled", "sluice.embedded.data-directory"}) {
                assertThat(json).contains("\"name\": \"" + name + "\"");
            }
            assertThat(json).contains("\"defaultValue\": \"sluice\"").contains("\"description\": \"Database schema of the installation");
        }
    }

    private static ErrorCode code(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof SluiceException se) {
                return se.code();
            }
        }
        throw new AssertionError("no SluiceException in " + t, t);
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnSluice {
        @Bean(destroyMethod = "close")
        Sluice mySluice(DataSource ds) {
            return Sluice.builder().dataSource(ds).schema(SCHEMA).clientId("mine").maintenance(false).build();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnBeans {
        SluiceListenerContainer container;
        SluiceHealthIndicator health;

        @Bean
        SluiceListenerContainer myContainer(Sluice sluice, SluiceListenerPostProcessor endpoints, SluiceProperties p) {
            container = new SluiceListenerContainer(sluice, endpoints, p);
            return container;
        }

        @Bean
        SluiceHealthIndicator sluiceHealthIndicator(SluiceProbe probe, SluiceProperties p) {
            health = new SluiceHealthIndicator(probe, null, p, "x");
            return health;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Customizers {
        @Bean
        @Order(2)
        SluiceBuilderCustomizer second() {
            return b -> b.clientId("second");
        }

        @Bean
        @Order(1)
        SluiceBuilderCustomizer first() {
            return b -> b.clientId("first");
        }
    }
}
