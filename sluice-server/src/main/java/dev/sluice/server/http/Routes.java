package dev.sluice.server.http;

import dev.sluice.TokenRole;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Handler;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Registers the API's routes, each with the role it needs: the handler runs only after {@link Access}
 * let the request in. Every route is also listed ({@link #all()}) so that the OpenAPI document can be
 * checked against what the server really serves.
 */
public final class Routes {
    /**
     * One route: method, path pattern, role (null: checked by the handler or none), one line of what it does, and
     * for action routes ({@code POST .../{job}:ack}) the actions its last path segment may end with.
     */
    public record Route(String method, String path, TokenRole role, String summary, List<String> actions) {
        /** The paths as documented: the path itself, or one per action ({@code .../{job}:ack}). */
        public List<String> documentedPaths() {
            return actions.isEmpty() ? List.of(path) : actions.stream().map(a -> path + ":" + a).toList();
        }
    }

    private final RoutesConfig routes;
    private final Access access;
    private final List<Route> all = new ArrayList<>();

    public Routes(RoutesConfig routes, Access access) {
        this.routes = routes;
        this.access = access;
    }

    /** A GET route. */
    public void get(String path, TokenRole role, String summary, Handler h) {
        all.add(new Route("get", path, role, summary, List.of()));
        routes.get(path, guarded(role, h));
    }

    /** A POST route. */
    public void post(String path, TokenRole role, String summary, Handler h) {
        all.add(new Route("post", path, role, summary, List.of()));
        routes.post(path, guarded(role, h));
    }

    /** A PUT route. */
    public void put(String path, TokenRole role, String summary, Handler h) {
        all.add(new Route("put", path, role, summary, List.of()));
        routes.put(path, guarded(role, h));
    }

    /** A DELETE route. */
    public void delete(String path, TokenRole role, String summary, Handler h) {
        all.add(new Route("delete", path, role, summary, List.of()));
        routes.delete(path, guarded(role, h));
    }

    /**
     * A POST whose last path segment names a resource and an action ({@code {job}:ack}); the handler reads the
     * action from the segment.
     */
    public void action(String path, List<String> actions, TokenRole role, String summary, Handler h) {
        all.add(new Route("post", path, role, summary, List.copyOf(actions)));
        routes.post(path, guarded(role, h));
    }

    /** A route whose role depends on the request (e.g. {@code /metrics} when public); {@code h} checks itself. */
    public void getUnguarded(String path, String summary, Handler h) {
        all.add(new Route("get", path, null, summary, List.of()));
        routes.get(path, h);
    }

    private Handler guarded(TokenRole role, Handler h) {
        return ctx -> {
            access.require(ctx, role);
            h.handle(ctx);
        };
    }

    /** Every route registered so far. */
    public List<Route> all() {
        return Collections.unmodifiableList(all);
    }
}
