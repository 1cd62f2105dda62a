package dev.sluice.spring;

import dev.sluice.Sluice;
import dev.sluice.server.SluiceServer;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * The Sluice HTTP/JSON API and dashboard ({@code sluice-server}) beside the application, when it is on the classpath
 * and {@code sluice.server.enabled=true}. Its address rules are the server's own: with no API token, only a
 * loopback address is allowed ({@code SLU-} OPEN_MODE_REFUSED otherwise).
 */
@AutoConfiguration(after = SluiceAutoConfiguration.class)
@ConditionalOnClass({Sluice.class, SluiceServer.class})
@ConditionalOnBean(Sluice.class)
@ConditionalOnProperty(prefix = "sluice.server", name = "enabled", havingValue = "true")
public class SluiceServerAutoConfiguration {
    /** Used by Spring. */
    public SluiceServerAutoConfiguration() {
    }

    /**
     * The started server (closed with the context, before the client). A Prometheus registry bean, if the application
     * has one, is what its {@code /metrics} exposes.
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public SluiceServer sluiceServer(Sluice sluice, SluiceProperties properties,
                                     ObjectProvider<io.micrometer.prometheusmetrics.PrometheusMeterRegistry> registry) {
        SluiceServerProperties p = properties.getServer();
        SluiceServer.Builder b = SluiceServer.builder(sluice).bind(p.getBind()).port(p.getPort()).metricsPublic(p.isMetricsPublic());
        io.micrometer.prometheusmetrics.PrometheusMeterRegistry r = registry.getIfUnique();
        if (r != null) {
            b.registry(r);
        }
        return b.start();
    }
}
