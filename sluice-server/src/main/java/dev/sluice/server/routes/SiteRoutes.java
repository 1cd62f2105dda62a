package dev.sluice.server.routes;

import dev.sluice.ErrorCode;
import dev.sluice.MetricSnapshot;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.SystemInfo;
import dev.sluice.TokenRole;
import dev.sluice.server.History;
import dev.sluice.server.http.Access;
import dev.sluice.server.http.ApiErrors;
import dev.sluice.server.http.Json;
import dev.sluice.server.http.Routes;
import dev.sluice.server.json.OpsDocuments;
import dev.sluice.server.json.QueueDocuments;
import dev.sluice.server.json.StreamDocuments;
import dev.sluice.server.pull.PullBridge;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * What is not a resource of the API proper: health, the OpenAPI document, Prometheus metrics, the dashboard's
 * overview and history, and the dashboard's static files (served from the jar with a strict content policy).
 */
final class SiteRoutes {
    private static final String ASSETS = "/dev/sluice/server/dashboard/";
    private static final Pattern ASSET = Pattern.compile("^[a-z0-9][a-z0-9-]{0,63}\\.(js|css|svg|html|png)$");
    private static final String CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            + "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

    private final Sluice sluice;
    private final Access access;
    private final History history;
    private final PrometheusMeterRegistry registry;
    private final boolean metricsPublic;
    private final PullBridge pull;
    private final Map<String, byte[]> assets = new ConcurrentHashMap<>();
    /** Made on first request from every route registered (they are all registered by then). */
    private final java.util.function.Supplier<byte[]> openApi;

    SiteRoutes(Sluice sluice, Access access, History history, PrometheusMeterRegistry registry, boolean metricsPublic,
               PullBridge pull) {
        this.sluice = sluice;
        this.access = access;
        this.history = history;
        this.registry = registry;
        this.metricsPublic = metricsPublic;
        this.pull = pull;
        this.openApi = new java.util.function.Supplier<>() {
            private volatile byte[] doc;

            @Override
            public byte[] get() {
                byte[] d = doc;
                if (d == null) {
                    d = Json.bytes(dev.sluice.server.http.OpenApi.document(routes.get(), "1"));
                    doc = d;
                }
                return d;
            }
        };
    }

    private java.util.function.Supplier<List<Routes.Route>> routes = List::of;

    void register(Routes r, RoutesConfig config) {
        routes = r::all;
        config.before(ctx -> {
            ctx.header("X-Content-Type-Options", "nosniff");
            ctx.header("Referrer-Policy", "no-referrer");
            ctx.header("X-Frame-Options", "DENY");
            ctx.header("Cache-Control", "no-store");
        });
        r.getUnguarded("/api/v1/health", "Health: 200 ok, 503 when the database is unreachable (no token needed)", this::health);
        r.getUnguarded("/api/v1/openapi.json", "This API as an OpenAPI 3 document (no token needed)",
                ctx -> ctx.contentType("application/json").result(openApi.get()));
        r.getUnguarded("/metrics", "Prometheus metrics (read role unless the server runs with --metrics-public)", ctx -> {
            if (!metricsPublic) {
                access.require(ctx, TokenRole.READ);
            }
            ctx.contentType("text/plain; version=0.0.4; charset=utf-8").result(registry.scrape());
        });
        r.get("/api/v1/overview", TokenRole.READ, "Everything the dashboard's overview shows, in one request", this::overview);
        r.get("/api/v1/history", TokenRole.READ, "The last 15 minutes of metric snapshots (for charts)", this::history);
        r.get("/api/v1/whoami", TokenRole.READ, "The role of the request's token (admin in open mode)", ctx -> {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("role", access.role(ctx).text());
            m.put("open_mode", access.open());
            Json.reply(ctx, 200, m);
        });
        r.getUnguarded("/", "The dashboard", ctx -> asset(ctx, "index.html", "text/html; charset=utf-8"));
        r.getUnguarded("/assets/{file}", "The dashboard's static files", ctx -> {
            String file = ctx.pathParam("file");
            if (!ASSET.matcher(file).matches()) {
                throw new SluiceException(ErrorCode.ROUTE_NOT_FOUND, "no such asset");
            }
            asset(ctx, file, type(file));
        });
    }

    private static String type(String file) {
        String ext = file.substring(file.lastIndexOf('.') + 1);
        return switch (ext) {
            case "js" -> "text/javascript; charset=utf-8";
            case "css" -> "text/css; charset=utf-8";
            case "svg" -> "image/svg+xml";
            case "png" -> "image/png";
            default -> "text/html; charset=utf-8";
        };
    }

    private void asset(Context ctx, String file, String contentType) {
        byte[] bytes = assets.computeIfAbsent(file, f -> {
            try (InputStream in = SiteRoutes.class.getResourceAsStream(ASSETS + f)) {
                return in == null ? new byte[0] : in.readAllBytes();
            } catch (IOException e) {
                return new byte[0];
            }
        });
        if (bytes.length == 0) {
            throw new SluiceException(ErrorCode.ROUTE_NOT_FOUND, "no such asset");
        }
        ctx.header("Content-Security-Policy", CSP);
        ctx.header("Cache-Control", "no-cache");
        ctx.contentType(contentType).result(bytes);
    }

    private void health(Context ctx) {
        Map<String, Object> m = new LinkedHashMap<>();
        try {
            Optional<SystemInfo> s = sluice.system().get();
            m.put("status", "ok");
            m.put("database", "ok");
            m.put("schema", sluice.schema());
            m.put("installed", s.isPresent());
            m.put("schema_version", s.map(SystemInfo::version).orElse(null));
            Json.reply(ctx, 200, m);
        } catch (SluiceException e) {
            m.put("status", "unavailable");
            m.put("database", "unreachable");
            m.put("error", ApiErrors.document(e).get("error"));
            Json.reply(ctx, 503, m);
        }
    }

    private void overview(Context ctx) {
        Map<String, Object> m = new LinkedHashMap<>();
        Map<String, MetricSnapshot> streamFigures = new LinkedHashMap<>();
        List<Map<String, Object>> groups = new ArrayList<>();
        for (MetricSnapshot s : sluice.maintenance().metrics()) {
            if (s.kind().equals("stream")) {
                streamFigures.put(s.name(), s);
            } else if (s.kind().equals("group")) {
                groups.add(StreamDocuments.metric(s));
            }
        }
        List<Map<String, Object>> streams = new ArrayList<>();
        sluice.streams().forEach(s -> {
            Map<String, Object> d = StreamDocuments.stream(s);
            MetricSnapshot f = streamFigures.get(s.name());
            d.put("head", f == null ? null : f.head());
            d.put("rate_per_second", f == null ? null : f.ratePerSecond());
            streams.add(d);
        });
        m.put("streams", streams);
        m.put("groups", groups);
        m.put("queues", sluice.queues().stream().map(QueueDocuments::queue).toList());
        m.put("schedules", sluice.schedules().stream().map(OpsDocuments::schedule).toList());
        m.put("workers", sluice.fleet().workers().stream().map(OpsDocuments::worker).toList());
        m.put("manager", sluice.maintenance().status().manager().map(OpsDocuments::manager).orElse(null));
        Map<String, Object> server = new LinkedHashMap<>();
        server.put("open_mode", access.open());
        server.put("http_claims", pull.liveClaims());
        server.put("http_groups", pull.activeGroups());
        m.put("server", server);
        Json.reply(ctx, 200, m);
    }

    private void history(Context ctx) {
        Map<String, Object> series = new LinkedHashMap<>();
        history.snapshot().forEach((k, points) -> {
            List<Object[]> rows = new ArrayList<>(points.size());
            for (History.Point p : points) {
                rows.add(new Object[] {p.atMillis(), p.rate(), p.lag(), p.dead(), p.pending(), p.processing()});
            }
            series.put(k, rows);
        });
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("columns", List.of("at_ms", "rate_per_second", "lag", "dead", "pending", "processing"));
        m.put("series", series);
        Json.reply(ctx, 200, m);
    }
}
