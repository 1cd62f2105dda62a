package dev.sluice.server;

import dev.sluice.Sluice;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.server.pull.PullOptions;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

/** A client and a server on a free loopback port over a test class's schema. */
final class ServerFixture implements AutoCloseable {
    final Sluice sluice;
    final SluiceServer server;
    final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);

    ServerFixture(TestDatabase db) {
        this(db, PullOptions.defaults());
    }

    ServerFixture(TestDatabase db, PullOptions pull) {
        sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).allowDestroy(true).meterRegistry(registry)
                .meterRefresh(java.time.Duration.ofMillis(500)).build();
        sluice.system().register();
        server = SluiceServer.builder(sluice).port(0).registry(registry).pull(pull).historyInterval(java.time.Duration.ofMillis(200))
                .start();
    }

    /** A client of the server (no token: open mode, unless tokens exist). */
    Http http() {
        return new Http(server.url(), null);
    }

    @Override
    public void close() {
        server.close();
        sluice.close();
    }
}
