package dev.sluice.spring;

import dev.sluice.Sluice;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The {@code sluice} health indicator (with spring-boot-health) and info contributor (with spring-boot-actuator),
 * both reading the database through one bounded {@link SluiceProbe}.
 */
@AutoConfiguration(after = SluiceListenerAutoConfiguration.class)
@ConditionalOnClass(Sluice.class)
@ConditionalOnBean(Sluice.class)
public class SluiceActuatorAutoConfiguration {
    /** Used by Spring. */
    public SluiceActuatorAutoConfiguration() {
    }

    /** The bounded database reads of health and info. */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public SluiceProbe sluiceProbe(Sluice sluice, SluiceProperties properties) {
        return new SluiceProbe(sluice, properties.getHealth().getTimeout());
    }

    /** The health indicator, named {@code sluice} by its bean name. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
    @org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator("sluice")
    static class HealthConfiguration {
        @Bean
        @ConditionalOnMissingBean(name = "sluiceHealthIndicator")
        SluiceHealthIndicator sluiceHealthIndicator(SluiceProbe probe, ObjectProvider<SluiceListenerContainer> listeners,
                                                    SluiceProperties properties, Sluice sluice) {
            return new SluiceHealthIndicator(probe, listeners.getIfUnique(), properties, sluice.schema());
        }
    }

    /** The info contributor. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.actuate.info.InfoContributor")
    static class InfoConfiguration {
        @Bean
        @ConditionalOnMissingBean(name = "sluiceInfoContributor")
        SluiceInfoContributor sluiceInfoContributor(SluiceProbe probe, Sluice sluice) {
            return new SluiceInfoContributor(probe, sluice.schema());
        }
    }
}
