package dev.sluice.spring;

import dev.sluice.embedded.EmbeddedPostgresServer;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.jdbc.DataSourceBuilder;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Opt-in ({@code sluice.embedded.enabled=true}) fallback for development and demos: with {@code sluice-embedded} on
 * the classpath, no DataSource bean and no {@code spring.datasource.url}, it starts an embedded PostgreSQL
 * ({@code sluice.embedded.data-directory}, kept across restarts; a temporary one when unset) and pools connections to
 * it. Configure a real database and this backs off by itself.
 */
@AutoConfiguration(before = DataSourceAutoConfiguration.class)
@ConditionalOnClass({EmbeddedPostgresServer.class, DataSourceBuilder.class})
@ConditionalOnProperty(prefix = "sluice.embedded", name = "enabled", havingValue = "true")
@ConditionalOnMissingBean(DataSource.class)
@Conditional(SluiceEmbeddedAutoConfiguration.NoDataSourceUrl.class)
public class SluiceEmbeddedAutoConfiguration {
    private static final Logger log = LoggerFactory.getLogger(SluiceEmbeddedAutoConfiguration.class);

    /** Used by Spring. */
    public SluiceEmbeddedAutoConfiguration() {
    }

    /** The embedded server, stopped when the context closes (after the pool and the client that use it). */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public EmbeddedPostgresServer sluiceEmbeddedPostgres(SluiceProperties properties, Environment environment) {
        SluiceProperties.Embedded e = properties.getEmbedded();
        EmbeddedPostgresServer server = e.getDataDirectory() == null ? EmbeddedPostgresServer.startTemporary()
                : EmbeddedPostgresServer.start(e.getDataDirectory().toAbsolutePath(), e.getPort());
        if (environment.getProperty("spring.main.register-shutdown-hook", Boolean.class, true)) {
            // The context's own shutdown hook closes this server after the listeners drained and the client closed;
            // the server's hook would stop the database at the same time, under the draining consumers.
            server.detachShutdownHook();
        }
        // The port only: the URL carries the password.
        log.info("sluice: embedded PostgreSQL on 127.0.0.1:{} ({})", server.port(),
                server.temporary() ? "temporary data directory" : server.dataDirectory());
        return server;
    }

    /** A pool (Hikari when present) over the embedded server. */
    @Bean
    public DataSource dataSource(EmbeddedPostgresServer server) {
        return DataSourceBuilder.create().driverClassName("org.postgresql.Driver").url(server.jdbcUrl()).build();
    }

    /** Matches when {@code spring.datasource.url} is not set: a configured database always wins. */
    static final class NoDataSourceUrl extends SpringBootCondition {
        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            String url = context.getEnvironment().getProperty("spring.datasource.url");
            return url == null || url.isBlank() ? ConditionOutcome.match("no spring.datasource.url")
                    : ConditionOutcome.noMatch("spring.datasource.url is set");
        }
    }
}
