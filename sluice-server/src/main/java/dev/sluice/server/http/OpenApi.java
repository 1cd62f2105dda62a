package dev.sluice.server.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The OpenAPI 3 document of the server, made from the routes it registered (so it cannot list a route the
 * server does not serve, or miss one): paths with their parameters, the role each needs, bearer security, the
 * error document, and the query parameters and bodies named in {@link #QUERY} and {@link #BODIES}.
 */
public final class OpenApi {
    private static final Pattern PARAM = Pattern.compile("\\{([a-z]+)}");
    /** Query parameters by route ("METHOD path"). */
    static final Map<String, List<String>> QUERY = Map.of(
            "get /api/v1/streams/{stream}/messages", List.of("after", "limit"),
            "get /api/v1/streams/{stream}/groups/{group}/dead", List.of("limit", "cursor"),
            "get /api/v1/queues/{queue}/jobs", List.of("state", "limit", "cursor"),
            "get /api/v1/queues/{queue}/dead", List.of("limit", "cursor"),
            "delete /api/v1/streams/{stream}", List.of("force"));
    /** Request bodies by route: the media type each takes. */
    static final Map<String, String> BODIES = Map.ofEntries(
            Map.entry("put /api/v1/streams/{stream}", "application/json"),
            Map.entry("post /api/v1/streams/{stream}/messages", "*/*"),
            Map.entry("post /api/v1/streams/{stream}/messages:batch", "application/json"),
            Map.entry("put /api/v1/streams/{stream}/groups/{group}", "application/json"),
            Map.entry("post /api/v1/streams/{stream}/groups/{group}:rewind", "application/json"),
            Map.entry("post /api/v1/streams/{stream}/groups/{group}/dead:redrive", "application/json"),
            Map.entry("post /api/v1/streams/{stream}/groups/{group}/dead:purge", "application/json"),
            Map.entry("post /api/v1/streams/{stream}/groups/{group}/claims", "application/json"),
            Map.entry("post /api/v1/streams/{stream}/groups/{group}/claims/{claim}/outcomes", "application/json"),
            Map.entry("post /api/v1/queues/{queue}/jobs", "application/json"),
            Map.entry("post /api/v1/queues/{queue}/claims", "application/json"),
            Map.entry("post /api/v1/queues/{queue}/dead:revive", "application/json"),
            Map.entry("post /api/v1/queues/{queue}/dead:purge", "application/json"),
            Map.entry("put /api/v1/schedules/{schedule}", "application/json"));

    private OpenApi() {
    }

    /** The document for {@code routes}. */
    public static ObjectNode document(List<Routes.Route> routes, String version) {
        ObjectNode doc = Json.object();
        doc.put("openapi", "3.0.3");
        ObjectNode info = doc.putObject("info");
        info.put("title", "Sluice HTTP API");
        info.put("version", version);
        info.put("description", "Streams, consumer groups with HTTP pull consumption, job queues, schedules, locks, the fleet "
                + "and maintenance of one Sluice schema. Every route needs a bearer token with at least the role in "
                + "x-sluice-role (read < write < admin), except in open mode.");
        ObjectNode schemes = doc.putObject("components").putObject("securitySchemes");
        schemes.putObject("bearer").put("type", "http").put("scheme", "bearer");
        ObjectNode error = ((ObjectNode) doc.get("components")).putObject("schemas").putObject("Error");
        error.put("type", "object");
        ObjectNode inner = error.putObject("properties").putObject("error");
        inner.put("type", "object");
        ObjectNode props = inner.putObject("properties");
        props.putObject("code").put("type", "string").put("example", "SLU-0100");
        props.putObject("name").put("type", "string");
        props.putObject("problem").put("type", "string");
        props.putObject("retryable").put("type", "boolean");
        props.putObject("fix").put("type", "string");
        ObjectNode paths = doc.putObject("paths");
        for (Routes.Route r : routes) {
            for (String path : r.documentedPaths()) {
                ObjectNode item = paths.has(path) ? (ObjectNode) paths.get(path) : paths.putObject(path);
                ObjectNode op = item.putObject(r.method());
                op.put("summary", r.summary());
                op.put("operationId", r.method() + path.replaceAll("[^A-Za-z0-9]+", "_"));
                if (r.role() != null) {
                    op.put("x-sluice-role", r.role().text());
                    op.putArray("security").addObject().putArray("bearer");
                } else {
                    op.putArray("security");
                }
                ArrayNode params = op.putArray("parameters");
                Matcher m = PARAM.matcher(path);
                while (m.find()) {
                    ObjectNode p = params.addObject();
                    p.put("name", m.group(1)).put("in", "path").put("required", true);
                    p.putObject("schema").put("type", "string");
                }
                String key = r.method() + " " + path;
                for (String q : QUERY.getOrDefault(key, List.of())) {
                    ObjectNode p = params.addObject();
                    p.put("name", q).put("in", "query").put("required", false);
                    p.putObject("schema").put("type", "string");
                }
                String body = BODIES.get(key);
                if (body != null) {
                    op.putObject("requestBody").put("required", !body.equals("application/json") || !r.method().equals("post"))
                            .putObject("content").putObject(body).putObject("schema").put("type", body.equals("*/*") ? "string" : "object");
                }
                ObjectNode responses = op.putObject("responses");
                responses.putObject("200").put("description", "OK (201 when created, 204 when nothing is returned)");
                ObjectNode err = responses.putObject("default");
                err.put("description", "A coded error (400, 401, 403, 404, 409, 413, 429, 503)");
                err.putObject("content").putObject("application/json").putObject("schema").put("$ref", "#/components/schemas/Error");
            }
        }
        return doc;
    }
}
