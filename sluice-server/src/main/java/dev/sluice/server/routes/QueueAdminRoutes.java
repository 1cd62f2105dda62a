package dev.sluice.server.routes;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.DeadJob;
import dev.sluice.ErrorCode;
import dev.sluice.JobRun;
import dev.sluice.Page;
import dev.sluice.Queue;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.TokenRole;
import dev.sluice.internal.text.Echo;
import dev.sluice.server.http.Json;
import dev.sluice.server.http.Requests;
import dev.sluice.server.http.Routes;
import dev.sluice.server.json.QueueDocuments;
import io.javalin.http.Context;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A queue's dead jobs (paged, revived, purged), its run records and event trails, and cancellation. */
final class QueueAdminRoutes {
    private final Sluice sluice;

    QueueAdminRoutes(Sluice sluice) {
        this.sluice = sluice;
    }

    void register(Routes r) {
        String base = "/api/v1/queues/{queue}";
        r.get(base + "/dead", TokenRole.READ, "Dead jobs, keyset-paged (limit, cursor)", this::dead);
        r.post(base + "/dead:revive", TokenRole.ADMIN, "Revive dead jobs ({\"ids\":[...]} or {\"all\":true})", ctx -> {
            JsonNode body = Requests.json(ctx);
            boolean all = Requests.boolField(body, "all", false);
            List<Long> ids = GroupRoutes.idList(body, all);
            Queue<byte[]> q = queue(ctx);
            Json.reply(ctx, 200, Map.of("revived", all ? q.admin().redriveAll() : q.revive(ids)));
        });
        r.post(base + "/dead:purge", TokenRole.ADMIN, "Purge dead jobs ({\"ids\":[...]} or {\"all\":true})", ctx -> {
            JsonNode body = Requests.json(ctx);
            boolean all = Requests.boolField(body, "all", false);
            List<Long> ids = GroupRoutes.idList(body, all);
            Queue<byte[]> q = queue(ctx);
            Json.reply(ctx, 200, Map.of("purged", all ? q.purgeDead() : q.purgeDead(ids)));
        });
        r.get(base + "/runs/{job}", TokenRole.READ, "A job's run record (live, dead or kept)", ctx -> {
            long id = Requests.idPath(ctx, "job");
            JobRun run = queue(ctx).run(id).orElseThrow(() -> new SluiceException(ErrorCode.JOB_NOT_FOUND, "queue '"
                    + Echo.of(ctx.pathParam("queue")) + "' has no trace of job " + id));
            Json.reply(ctx, 200, QueueDocuments.run(run));
        });
        r.get(base + "/runs/{job}/events", TokenRole.READ, "A job's event trail", ctx -> Json.reply(ctx, 200, Map.of("events",
                queue(ctx).events(Requests.idPath(ctx, "job")).stream().map(QueueDocuments::event).toList())));
        r.action(base + "/runs/{job}", List.of("cancel"), TokenRole.ADMIN, "Cancel a job", ctx -> {
            String seg = ctx.pathParam("job");
            if (!seg.endsWith(":cancel")) {
                throw Requests.malformed("POST on a run is only {id}:cancel");
            }
            long id;
            try {
                id = Long.parseLong(seg.substring(0, seg.length() - 7));
            } catch (NumberFormatException e) {
                throw Requests.malformed("'" + Echo.of(seg) + "' is not {id}:cancel");
            }
            Json.reply(ctx, 200, Map.of("id", id, "cancellation", queue(ctx).cancel(id).toString()));
        });
    }

    private Queue<byte[]> queue(Context ctx) {
        return sluice.queue(ctx.pathParam("queue"));
    }

    private void dead(Context ctx) {
        Page<DeadJob> page = queue(ctx).dead(ctx.queryParam("cursor"), Requests.intParam(ctx, "limit", 50, 1, 1000));
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("dead", page.items().stream().map(QueueDocuments::dead).toList());
        m.put("next_cursor", page.next());
        Json.reply(ctx, 200, m);
    }
}
