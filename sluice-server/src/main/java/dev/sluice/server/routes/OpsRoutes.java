package dev.sluice.server.routes;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.ErrorCode;
import dev.sluice.Schedule;
import dev.sluice.ScheduleSpec;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.TokenRole;
import dev.sluice.internal.text.Echo;
import dev.sluice.server.http.Json;
import dev.sluice.server.http.Requests;
import dev.sluice.server.http.Routes;
import dev.sluice.server.json.OpsDocuments;
import dev.sluice.server.json.StreamDocuments;
import io.javalin.http.Context;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Schedules (list, get, register, run now, suspend, resume, destroy), locks, the fleet and maintenance. */
final class OpsRoutes {
    private static final Set<String> SCHEDULE_FIELDS = Set.of("cron", "every", "zone", "stream", "queue", "payload", "payload_text",
            "payload_base64", "content_type", "catch_up");
    private final Sluice sluice;

    OpsRoutes(Sluice sluice) {
        this.sluice = sluice;
    }

    void register(Routes r) {
        String base = "/api/v1/schedules";
        r.get(base, TokenRole.READ, "List schedules", ctx -> Json.reply(ctx, 200,
                Map.of("schedules", sluice.schedules().stream().map(OpsDocuments::schedule).toList())));
        r.get(base + "/{schedule}", TokenRole.READ, "Get a schedule", ctx -> Json.reply(ctx, 200, OpsDocuments.schedule(
                schedule(ctx).get().orElseThrow(() -> new SluiceException(ErrorCode.SCHEDULE_NOT_FOUND, "no schedule named '"
                        + Echo.of(ctx.pathParam("schedule")) + "'")))));
        r.put(base + "/{schedule}", TokenRole.ADMIN, "Register a schedule (cron or every, stream or queue)", this::put);
        r.delete(base + "/{schedule}", TokenRole.ADMIN, "Destroy a schedule", ctx -> {
            schedule(ctx).destroy();
            ctx.status(204);
        });
        r.action(base + "/{schedule}", List.of("run", "suspend", "resume"), TokenRole.ADMIN, "Run a schedule now, suspend or resume it",
                this::action);
        r.get("/api/v1/locks", TokenRole.READ, "List locks", ctx -> Json.reply(ctx, 200,
                Map.of("locks", sluice.locks().stream().map(OpsDocuments::lock).toList())));
        r.get("/api/v1/fleet", TokenRole.READ, "Workers and their instances", ctx -> {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("workers", sluice.fleet().workers().stream().map(OpsDocuments::worker).toList());
            m.put("instances", sluice.fleet().instances().stream().map(OpsDocuments::instance).toList());
            Json.reply(ctx, 200, m);
        });
        r.get("/api/v1/maintenance", TokenRole.READ, "The manager, whether paused, each sweep's last run, the newest metrics",
                ctx -> {
                    Map<String, Object> m = OpsDocuments.maintenance(sluice.maintenance().status());
                    m.put("metrics", sluice.maintenance().metrics().stream().map(StreamDocuments::metric).toList());
                    Json.reply(ctx, 200, m);
                });
    }

    private Schedule schedule(Context ctx) {
        return sluice.schedule(ctx.pathParam("schedule"));
    }

    private void put(Context ctx) {
        JsonNode body = Requests.json(ctx);
        if (!body.isObject()) {
            throw Requests.malformed("the body must be a schedule object");
        }
        for (Iterator<String> it = body.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!SCHEDULE_FIELDS.contains(f)) {
                throw Requests.malformed("unknown schedule field '" + Echo.of(f) + "'");
            }
        }
        String cron = Requests.textField(body, "cron", 256);
        String every = Requests.textField(body, "every", 64);
        if ((cron == null) == (every == null)) {
            throw Requests.malformed("give exactly one of cron or every");
        }
        if (every != null) {
            Requests.duration(every, "every");
        }
        ScheduleSpec.Builder b = ScheduleSpec.builder(cron != null ? cron : "@every " + every);
        String zone = Requests.textField(body, "zone", 64);
        if (zone != null) {
            b.zone(zone);
        }
        String stream = Requests.textField(body, "stream", 256);
        String queue = Requests.textField(body, "queue", 256);
        if ((stream == null) == (queue == null)) {
            throw Requests.malformed("give exactly one target: stream or queue");
        }
        if (stream != null) {
            b.toStream(stream);
        } else {
            b.toQueue(queue);
        }
        if (body.has("payload") || body.has("payload_text") || body.has("payload_base64")) {
            StreamRoutes.Payload p = StreamRoutes.payload(Json.object().setAll(pick(body)), Set.of("payload", "payload_text",
                    "payload_base64", "content_type"));
            b.payload(p.bytes(), p.contentType());
        }
        if (body.hasNonNull("catch_up")) {
            b.catchUp(Requests.intField(body, "catch_up", 1, 1, 1_000_000));
        }
        Schedule s = schedule(ctx);
        boolean existed = s.get().isPresent();
        Json.reply(ctx, existed ? 200 : 201, OpsDocuments.schedule(s.register(b.build())));
    }

    private static Map<String, JsonNode> pick(JsonNode body) {
        Map<String, JsonNode> m = new LinkedHashMap<>();
        for (String f : new String[] {"payload", "payload_text", "payload_base64", "content_type"}) {
            if (body.has(f)) {
                m.put(f, body.get(f));
            }
        }
        return m;
    }

    private void action(Context ctx) {
        String seg = ctx.pathParam("schedule");
        int colon = seg.lastIndexOf(':');
        Schedule s = sluice.schedule(colon < 0 ? seg : seg.substring(0, colon));
        if (seg.endsWith(":run")) {
            Json.reply(ctx, 200, OpsDocuments.fire(s.runNow()));
        } else if (seg.endsWith(":suspend")) {
            Json.reply(ctx, 200, OpsDocuments.schedule(s.suspend()));
        } else if (seg.endsWith(":resume")) {
            Json.reply(ctx, 200, OpsDocuments.schedule(s.resume()));
        } else {
            throw Requests.malformed("POST on a schedule is {name}:run, :suspend or :resume");
        }
    }

}
