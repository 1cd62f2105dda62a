package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.Sluice;
import dev.sluice.embedded.EmbeddedPostgresServer;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.info.Info;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The sluice health indicator: UP, DEGRADED over the lag threshold, DOWN when the database stops; and the info. */
class HealthTest {
    private static ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, SluiceAutoConfiguration.class,
                        SluiceListenerAutoConfiguration.class, SluiceActuatorAutoConfiguration.class))
                .withPropertyValues("sluice.maintenance.enabled=false");
    }

    /** A listener, so the details show a running one. */
    static class Audit {
        @SluiceListener(stream = "audited", group = "audit")
        void handle(String text) {
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class WithListener {
        @Bean
        Audit audit() {
            return new Audit();
        }
    }

    @Test
    void upThenDegradedWhenAGroupLagsAboveTheThreshold() {
        runner().withPropertyValues(TestDb.properties(TestDb.freshSchema("health")))
                .withPropertyValues("sluice.health.lag-threshold=3").withUserConfiguration(WithListener.class).run(ctx -> {
                    Sluice sluice = ctx.getBean(Sluice.class);
                    SluiceHealthIndicator indicator = ctx.getBean(SluiceHealthIndicator.class);
                    sluice.maintenance().runOnce();
                    Health up = indicator.health();
                    assertThat(up.getStatus()).isEqualTo(Status.UP);
                    assertThat(up.getDetails()).containsEntry("schema", sluice.schema()).containsEntry("schemaState", "CURRENT")
                            .containsEntry("listeners", Map.of("audited/audit", true)).containsKey("schemaVersion");

                    // A group nobody consumes falls 5 behind; the manager's next snapshot shows it.
                    sluice.stream("backlog").register();
                    sluice.stream("backlog").consumerGroup("slow").register();
                    var producer = sluice.stream("backlog", String.class).producer();
                    for (int i = 0; i < 5; i++) {
                        producer.produce("m" + i);
                    }
                    sluice.maintenance().runOnce();
                    Health degraded = indicator.health();
                    assertThat(degraded.getStatus()).isEqualTo(SluiceHealthIndicator.DEGRADED);
                    assertThat(degraded.getDetails()).containsEntry("groupsOverLagThreshold", Map.of("backlog/slow", 5L))
                            .containsEntry("lagThreshold", 3L);

                    Info.Builder info = new Info.Builder();
                    ctx.getBean(SluiceInfoContributor.class).contribute(info);
                    @SuppressWarnings("unchecked")
                    Map<String, Object> sluiceInfo = (Map<String, Object>) info.build().getDetails().get("sluice");
                    assertThat(sluiceInfo).containsEntry("schema", sluice.schema()).containsKeys("version", "schemaVersions");
                    assertThat(sluiceInfo.get("schemaVersions").toString()).contains("system").contains("CURRENT");
                });
    }

    @Test
    void downWhenAListenerStopsWhileTheContextRuns() {
        runner().withPropertyValues(TestDb.properties(TestDb.freshSchema("stopped"))).withUserConfiguration(WithListener.class)
                .run(ctx -> {
                    SluiceHealthIndicator indicator = ctx.getBean(SluiceHealthIndicator.class);
                    assertThat(indicator.health().getStatus()).isEqualTo(Status.UP);
                    // Closing the client under the container stops its consumption: not a shutdown the container ran.
                    ctx.getBean(Sluice.class).close();
                    Health h = indicator.health();
                    assertThat(h.getStatus()).isEqualTo(Status.DOWN);
                    assertThat(h.getDetails()).containsEntry("stoppedListeners", java.util.List.of("audited/audit"));
                });
    }

    @Test
    void downWhenTheDatabaseStops() {
        EmbeddedPostgresServer pg = EmbeddedPostgresServer.startTemporary();
        try {
            runner().withPropertyValues("spring.datasource.url=" + pg.jdbcUrl(), "sluice.schema=health_down",
                    "spring.datasource.hikari.connection-timeout=500", "sluice.health.timeout=1500ms").run(ctx -> {
                        SluiceHealthIndicator indicator = ctx.getBean(SluiceHealthIndicator.class);
                        ctx.getBean(Sluice.class).system().register();
                        assertThat(indicator.health().getStatus()).isEqualTo(Status.UP);
                        pg.close();
                        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                            Health h = indicator.health();
                            assertThat(h.getStatus()).isEqualTo(Status.DOWN);
                            assertThat(h.getDetails()).containsKey("error");
                            // Neither the password nor the URL shows.
                            assertThat(h.getDetails().toString()).doesNotContain(pg.password()).doesNotContain("jdbc:");
                        });
                    });
        } finally {
            pg.close();
        }
    }

    @Test
    void outOfServiceWhenMigrationsArePendingAndTheClientMayNotMigrate() {
        // An empty schema: the client may not install it, so it cannot work until an operator migrates.
        String schema = TestDb.freshSchema("nomigrate");
        runner().withPropertyValues(TestDb.properties(schema)).withPropertyValues("sluice.auto-migrate=false").run(ctx -> {
            Health h = ctx.getBean(SluiceHealthIndicator.class).health();
            assertThat(h.getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
            assertThat(h.getDetails()).containsEntry("schemaState", "NOT_INSTALLED");
        });
        // With auto-migrate (the default) the first registration installs it: UP, the state a detail.
        runner().withPropertyValues(TestDb.properties(schema)).run(ctx ->
                assertThat(ctx.getBean(SluiceHealthIndicator.class).health().getStatus()).isEqualTo(Status.UP));
    }
}
