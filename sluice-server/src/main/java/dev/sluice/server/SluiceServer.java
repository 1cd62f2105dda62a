package dev.sluice.server;

import dev.sluice.ErrorCode;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;

import dev.sluice.server.http.Access;
import dev.sluice.server.http.ApiErrors;
import dev.sluice.server.http.Routes;
import dev.sluice.server.pull.PullBridge;
import dev.sluice.server.pull.PullOptions;
import dev.sluice.server.routes.Api;
import io.javalin.Javalin;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.Objects;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code sluice serve}: the HTTP/JSON API (v1), Prometheus metrics at {@code /metrics} and the web dashboard at
 * {@code /}, on one port, over a {@link Sluice} client the caller owns. Requests need a bearer token with the
 * route's role, except in open mode (no token exists; allowed only on a loopback address). Bounded everywhere:
 * request bodies, worker threads, long-polls, messages out to HTTP claims, idle connections.
 */
public final class SluiceServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SluiceServer.class);

    private final Builder b;
    private final PullBridge pull;
    private final Access access;
    private final History history;
    private final ScheduledExecutorService sampler;
    private final Api api;
    private Javalin app;
    private volatile boolean closed;

    private SluiceServer(Builder b, boolean open) {
        this.b = b;
        this.pull = new PullBridge(b.sluice, b.pull);
        this.access = new Access(secret -> b.sluice.tokens().authenticate(secret).map(t -> t.role()), open,
                () -> !b.sluice.tokens().anyActive());
        this.history = new History(b.sluice);
        this.sampler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "sluice-server-history");
            t.setDaemon(true);
            return t;
        });
        this.api = new Api(b.sluice, pull, access, history, b.registry, b.maxBodyBytes, b.metricsPublic);
    }

    /** A builder for a server over {@code sluice}. */
    public static Builder builder(Sluice sluice) {
        return new Builder(sluice);
    }

    /** The port the server listens on (the chosen one when built with port 0). */
    public int port() {
        return app.port();
    }

    /** The server's base URL, e.g. {@code http://127.0.0.1:7070/}. */
    public String url() {
        String host = b.bind.contains(":") ? "[" + b.bind + "]" : b.bind;
        return "http://" + host + ":" + port() + "/";
    }

    /** Whether requests without a token are let in (no token exists and the server binds loopback). */
    public boolean openMode() {
        return access.open();
    }

    /** The HTTP pull consumption of this server (claims out, groups consumed). */
    public PullBridge pull() {
        return pull;
    }

    private SluiceServer start() {
        QueuedThreadPool threads = new QueuedThreadPool(b.maxThreads, 4, 60_000);
        threads.setName("sluice-http");
        Timer.Builder requestTimer = Timer.builder("sluice.http.requests").description("HTTP requests by route and status")
                .publishPercentileHistogram();
        app = Javalin.create(config -> {
            config.startup.showJavalinBanner = false;
            config.startup.showOldJavalinVersionWarning = false;
            config.jetty.host = b.bind;
            config.jetty.port = b.port;
            config.jetty.threadPool = threads;
            config.jetty.modifyHttpConfiguration(hc -> {
                hc.setIdleTimeout(b.idleTimeout.toMillis());
                hc.setSendServerVersion(false);
            });
            config.jetty.modifyServer(server -> server.setStopTimeout(Math.max(1_000, b.drain.toMillis())));
            // Bodies are read only through Requests.body, which enforces each route's limit (413, coded) for declared
            // and chunked bodies alike; Javalin's own check would answer before our error handling.
            config.http.maxRequestSize = Long.MAX_VALUE;
            config.http.asyncTimeout = 0;
            config.router.ignoreTrailingSlashes = true;
            config.requestLogger.http((ctx, ms) -> requestTimer.tags("method", ctx.method().name(), "route",
                    ApiErrors.route(ctx), "status", Integer.toString(ctx.statusCode())).register(b.registry)
                    .record((long) (ms * 1_000_000L), TimeUnit.NANOSECONDS));
            config.routes.exception(SluiceException.class, (e, ctx) -> ApiErrors.respond(ctx, e));
            config.routes.exception(Exception.class, (e, ctx) -> ApiErrors.unexpected(ctx, e));
            config.routes.error(404, ctx -> {
                String type = ctx.res().getContentType();
                if (type == null || !type.startsWith("application/json")) {
                    ApiErrors.respond(ctx, new SluiceException(ErrorCode.ROUTE_NOT_FOUND, "no route for " + ctx.method().name()
                            + " " + dev.sluice.internal.text.Echo.of(ctx.path())));
                }
            });
            Routes routes = new Routes(config.routes, access);
            api.register(config.routes, routes);
        });
        try {
            app.start();
        } catch (RuntimeException e) {
            pull.close(Duration.ZERO);
            sampler.shutdownNow();
            throw new SluiceException(ErrorCode.SERVER_START_FAILED, "could not listen on " + b.bind + ":" + b.port + ": "
                    + rootMessage(e), e);
        }
        history.sample();
        sampler.scheduleWithFixedDelay(history::sample, b.historyInterval.toMillis(), b.historyInterval.toMillis(),
                TimeUnit.MILLISECONDS);
        if (access.open()) {
            log.warn("no API token exists: every request to {} is let in (open mode, loopback only); create one with"
                    + " 'sluice token create --role admin'", url());
        }
        return this;
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return t.getClass().getSimpleName() + (t.getMessage() == null ? "" : " (" + dev.sluice.internal.text.Echo.of(t.getMessage()) + ")");
    }

    /**
     * Stops: no new requests or claims; claims out get up to the drain time for their outcomes, then what is
     * unresolved is released (delivered again, not counted as an attempt); then the HTTP server stops.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        sampler.shutdownNow();
        pull.close(b.drain);
        api.close();
        if (app != null) {
            try {
                app.stop();
            } catch (RuntimeException e) {
                // Jetty's graceful stop timed out on a connection still open (a keep-alive client): it is closed anyway
                log.debug("the HTTP server's graceful stop timed out", e);
            }
        }
    }

    /** Whether {@code host} names only this machine (127.0.0.0/8, ::1, localhost). */
    static boolean loopback(String host) {
        try {
            for (InetAddress a : InetAddress.getAllByName(host)) {
                if (!a.isLoopbackAddress()) {
                    return false;
                }
            }
            return true;
        } catch (UnknownHostException e) {
            return false;
        }
    }

    /** Options of a server. */
    public static final class Builder {
        private final Sluice sluice;
        private String bind = "127.0.0.1";
        private int port = 7070;
        private long maxBodyBytes = 16L << 20;
        private boolean metricsPublic;
        private PrometheusMeterRegistry registry;
        private PullOptions pull = PullOptions.defaults();
        private Duration drain = Duration.ofSeconds(5);
        private Duration idleTimeout = Duration.ofSeconds(60);
        private Duration historyInterval = Duration.ofSeconds(10);
        private int maxThreads = 512;

        private Builder(Sluice sluice) {
            this.sluice = Objects.requireNonNull(sluice, "sluice");
        }

        /** The address to listen on (default 127.0.0.1). */
        public Builder bind(String address) {
            this.bind = Objects.requireNonNull(address, "address");
            return this;
        }

        /** The port (default 7070; 0 picks a free one). */
        public Builder port(int port) {
            if (port < 0 || port > 65_535) {
                throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "a port is 0 to 65535 (got " + port + ")");
            }
            this.port = port;
            return this;
        }

        /** The largest request body (default 16 MiB; 1 KiB to 64 MiB). */
        public Builder maxBodyBytes(long bytes) {
            if (bytes < 1024 || bytes > 64L << 20) {
                throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "the body limit is 1 KiB to 64 MiB (got " + bytes + ")");
            }
            this.maxBodyBytes = bytes;
            return this;
        }

        /** Whether {@code /metrics} needs no token (default false: the read role). */
        public Builder metricsPublic(boolean open) {
            this.metricsPublic = open;
            return this;
        }

        /**
         * The registry {@code /metrics} exposes; pass the one the Sluice client was built with so the library's
         * meters show too (default: a new one with the server's meters only).
         */
        public Builder registry(PrometheusMeterRegistry registry) {
            this.registry = registry;
            return this;
        }

        /** Bounds of HTTP pull consumption. */
        public Builder pull(PullOptions options) {
            this.pull = Objects.requireNonNull(options, "options");
            return this;
        }

        /** How long close() waits for HTTP claims out to get their outcomes (default 5 s). */
        public Builder drain(Duration d) {
            this.drain = Objects.requireNonNull(d, "drain");
            return this;
        }

        /** How often the dashboard's history is sampled (default 10 s). */
        public Builder historyInterval(Duration d) {
            if (d.toMillis() < 100) {
                throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "the history interval is at least 100 ms");
            }
            this.historyInterval = d;
            return this;
        }

        /** Starts the server; OPEN_MODE_REFUSED when no token exists and the address is not loopback. */
        public SluiceServer start() {
            if (registry == null) {
                registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
            }
            boolean loop = loopback(bind);
            boolean tokens = sluice.tokens().anyActive();
            if (!tokens && !loop) {
                throw new SluiceException(ErrorCode.OPEN_MODE_REFUSED, "no API token exists and " + dev.sluice.internal.text.Echo.of(bind)
                        + " is not a loopback address");
            }
            return new SluiceServer(this, loop).start();
        }
    }

}
