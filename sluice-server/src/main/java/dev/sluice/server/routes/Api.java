package dev.sluice.server.routes;

import dev.sluice.Sluice;
import dev.sluice.server.History;
import dev.sluice.server.http.Access;
import dev.sluice.server.http.Routes;
import dev.sluice.server.pull.PullBridge;
import io.javalin.config.RoutesConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.List;

/** Every route of the server, registered in one place (the OpenAPI document is checked against this list). */
public final class Api implements AutoCloseable {
    private final Sluice sluice;
    private final PullBridge pull;
    private final Access access;
    private final History history;
    private final PrometheusMeterRegistry registry;
    private final long maxBody;
    private final boolean metricsPublic;
    private final ProducerCache producers;
    private List<Routes.Route> routes = List.of();

    public Api(Sluice sluice, PullBridge pull, Access access, History history, PrometheusMeterRegistry registry, long maxBody,
               boolean metricsPublic) {
        this.sluice = sluice;
        this.pull = pull;
        this.access = access;
        this.history = history;
        this.registry = registry;
        this.maxBody = maxBody;
        this.metricsPublic = metricsPublic;
        this.producers = new ProducerCache(sluice);
    }

    /** Registers every route on {@code config} through {@code r}. */
    public void register(RoutesConfig config, Routes r) {
        new SiteRoutes(sluice, access, history, registry, metricsPublic, pull).register(r, config);
        new StreamRoutes(sluice, producers, maxBody).register(r);
        new GroupRoutes(sluice).register(r);
        new ClaimRoutes(pull).register(r);
        new QueueRoutes(sluice, maxBody).register(r);
        new QueueAdminRoutes(sluice).register(r);
        new OpsRoutes(sluice).register(r);
        routes = r.all();
    }

    /** The routes registered. */
    public List<Routes.Route> routes() {
        return routes;
    }

    @Override
    public void close() {
        producers.close();
    }
}
