package dev.sluice.spring;

import dev.sluice.Sluice;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * {@link SluiceListener} and {@link SluiceJob} methods: found and checked as beans initialise, started by
 * {@link SluiceListenerContainer} after the refresh, drained before the client closes. Uses whichever {@link Sluice}
 * bean the context has (the auto-configured one or the application's own).
 */
@AutoConfiguration(after = SluiceAutoConfiguration.class)
@ConditionalOnClass(Sluice.class)
@ConditionalOnBean(Sluice.class)
public class SluiceListenerAutoConfiguration {
    /** Used by Spring. */
    public SluiceListenerAutoConfiguration() {
    }

    /** Static: a post-processor is created before ordinary beans and must not pull them in early. */
    @Bean
    @ConditionalOnMissingBean
    public static SluiceListenerPostProcessor sluiceListenerPostProcessor() {
        return new SluiceListenerPostProcessor();
    }

    /** Starts and drains the endpoints; its stop runs before the client's close (it depends on the client bean). */
    @Bean
    @ConditionalOnMissingBean
    public SluiceListenerContainer sluiceListenerContainer(Sluice sluice, SluiceListenerPostProcessor endpoints,
                                                           SluiceProperties properties) {
        return new SluiceListenerContainer(sluice, endpoints, properties);
    }
}
