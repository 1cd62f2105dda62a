package dev.sluice.server.routes;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.EnqueueOptions;
import dev.sluice.ErrorCode;
import dev.sluice.JobClaim;
import dev.sluice.JobHandle;
import dev.sluice.JobInfo;
import dev.sluice.JobState;
import dev.sluice.Page;
import dev.sluice.ParentFailure;
import dev.sluice.Queue;
import dev.sluice.QueueOptions;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.TokenRole;
import dev.sluice.internal.text.Echo;
import dev.sluice.server.http.Json;
import dev.sluice.server.http.Requests;
import dev.sluice.server.http.Routes;
import dev.sluice.server.json.QueueDocuments;
import io.javalin.http.Context;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Job queues: list, enqueue, list and get jobs, claim (long-polling), and a claimed job's ack, complete,
 * retry, fail, terminal and heartbeat by id and claim token (stateless: any server of the schema resolves
 * any claim).
 */
final class QueueRoutes {
    private static final Set<String> JOB_FIELDS = Set.of("payload", "payload_text", "payload_base64", "content_type", "priority",
            "delay", "run_at", "expires_at", "unique_key", "headers", "after", "on_parent_failure", "max_attempts",
            "visibility_timeout", "keep_runs", "keep_events");
    private static final List<String> ACTIONS = List.of("ack", "complete", "retry", "fail", "terminal", "heartbeat");
    private static final Duration MAX_WAIT = Duration.ofSeconds(30);
    private final Sluice sluice;
    private final long maxBody;

    QueueRoutes(Sluice sluice, long maxBody) {
        this.sluice = sluice;
        this.maxBody = maxBody;
    }

    void register(Routes r) {
        String base = "/api/v1/queues";
        r.get(base, TokenRole.READ, "List queues with counts by state", ctx -> Json.reply(ctx, 200,
                Map.of("queues", sluice.queues().stream().map(QueueDocuments::queue).toList())));
        r.post(base + "/{queue}/jobs", TokenRole.WRITE, "Enqueue a job", this::enqueue);
        r.get(base + "/{queue}/jobs", TokenRole.READ, "List live jobs by state (state, limit, cursor)", this::jobs);
        r.get(base + "/{queue}/jobs/{job}", TokenRole.READ, "Get a live job", ctx -> {
            Queue<byte[]> q = sluice.queue(ctx.pathParam("queue"));
            long id = Requests.idPath(ctx, "job");
            JobInfo j = q.job(id).orElseThrow(() -> new SluiceException(ErrorCode.JOB_NOT_FOUND, "queue '"
                    + Echo.of(q.name()) + "' has no live job " + id));
            Json.reply(ctx, 200, QueueDocuments.job(j));
        });
        r.action(base + "/{queue}/jobs/{job}", ACTIONS, TokenRole.WRITE,
                "Resolve a claimed job by id and claim_token", this::resolve);
        r.post(base + "/{queue}/claims", TokenRole.WRITE, "Claim due jobs ({\"max\":N,\"wait\":\"5s\"}; long-polls)", this::claim);
    }

    private void enqueue(Context ctx) {
        JsonNode body = Json.parse(Requests.body(ctx, maxBody));
        StreamRoutes.Payload p = StreamRoutes.payload(body, JOB_FIELDS);
        EnqueueOptions.Builder o = EnqueueOptions.builder();
        o.priority(Requests.intField(body, "priority", 0, EnqueueOptions.MIN_PRIORITY, EnqueueOptions.MAX_PRIORITY));
        Duration delay = Requests.durationField(body, "delay", null);
        if (delay != null) {
            o.delay(delay);
        }
        Instant runAt = instant(body, "run_at");
        if (runAt != null) {
            o.runAt(runAt);
        }
        Instant expiresAt = instant(body, "expires_at");
        if (expiresAt != null) {
            o.expiresAt(expiresAt);
        }
        String unique = Requests.textField(body, "unique_key", 1024);
        if (unique != null) {
            o.uniqueKey(unique);
        }
        Map<String, String> headers = StreamRoutes.headers(body);
        if (!headers.isEmpty()) {
            o.headers(headers);
        }
        JsonNode after = body.get("after");
        if (after != null && !after.isNull()) {
            o.after(GroupRoutes.idList(Json.object().set("ids", after), false));
        }
        String onParentFailure = Requests.textField(body, "on_parent_failure", 16);
        if (onParentFailure != null) {
            o.onParentFailure(parentFailure(onParentFailure));
        }
        QueueOptions.Builder qo = QueueOptions.builder();
        if (body.hasNonNull("max_attempts")) {
            qo.maxAttempts(Requests.intField(body, "max_attempts", 0, 1, 1_000_000));
        }
        Duration vt = Requests.durationField(body, "visibility_timeout", null);
        if (vt != null) {
            qo.visibilityTimeout(vt);
        }
        Duration keepRuns = Requests.durationField(body, "keep_runs", null);
        if (keepRuns != null) {
            qo.keepRuns(keepRuns);
        }
        Duration keepEvents = Requests.durationField(body, "keep_events", null);
        if (keepEvents != null) {
            qo.keepEvents(keepEvents);
        }
        String queue = ctx.pathParam("queue");
        long id;
        if (body.has("payload")) {
            id = sluice.queue(queue, JsonNode.class, qo.build()).enqueue(body.get("payload"), o.build());
        } else if (body.has("payload_text")) {
            id = sluice.queue(queue, String.class, qo.build()).enqueue(body.get("payload_text").asText(), o.build());
        } else {
            id = sluice.queue(queue, byte[].class, qo.build()).enqueue(p.bytes(), o.build());
        }
        Json.reply(ctx, 201, Map.of("id", id));
    }

    private static ParentFailure parentFailure(String s) {
        try {
            return ParentFailure.valueOf(s.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw Requests.malformed("on_parent_failure is cancel or run");
        }
    }

    private static Instant instant(JsonNode body, String field) {
        String s = Requests.textField(body, field, 64);
        if (s == null) {
            return null;
        }
        try {
            return Instant.parse(s);
        } catch (java.time.format.DateTimeParseException e) {
            throw Requests.malformed(field + " must be an ISO-8601 instant such as 2026-01-01T00:00:00Z");
        }
    }

    private void jobs(Context ctx) {
        Queue<byte[]> q = sluice.queue(ctx.pathParam("queue"));
        String s = Optional.ofNullable(ctx.queryParam("state")).orElse("pending");
        JobState state;
        try {
            state = JobState.valueOf(s.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw Requests.malformed("state is pending, processing or waiting");
        }
        Page<JobInfo> page = q.jobs(state, ctx.queryParam("cursor"), Requests.intParam(ctx, "limit", 50, 1, 1000));
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("jobs", page.items().stream().map(QueueDocuments::job).toList());
        m.put("next_cursor", page.next());
        Json.reply(ctx, 200, m);
    }

    private void claim(Context ctx) {
        JsonNode body = Requests.json(ctx);
        int max = Requests.intField(body, "max", 1, 1, 1000);
        Duration wait = Requests.durationField(body, "wait", Duration.ZERO);
        if (wait.compareTo(MAX_WAIT) > 0) {
            throw Requests.malformed("wait must be at most " + MAX_WAIT);
        }
        List<JobHandle<byte[]>> jobs = sluice.queue(ctx.pathParam("queue")).claim(max, wait);
        List<Map<String, Object>> out = new ArrayList<>(jobs.size());
        for (JobHandle<byte[]> j : jobs) {
            out.add(QueueDocuments.claimed(j));
        }
        Json.reply(ctx, 200, Map.of("jobs", out));
    }

    private void resolve(Context ctx) {
        String seg = ctx.pathParam("job");
        int colon = seg.indexOf(':');
        if (colon < 1) {
            throw Requests.malformed("POST on a job is {id}:ack, :complete, :retry, :fail, :terminal or :heartbeat");
        }
        long id;
        try {
            id = Long.parseLong(seg.substring(0, colon));
        } catch (NumberFormatException e) {
            throw Requests.malformed("'" + Echo.of(seg.substring(0, colon)) + "' is not a job id");
        }
        String action = seg.substring(colon + 1);
        if (!ACTIONS.contains(action)) {
            throw Requests.malformed("unknown job action '" + Echo.of(action)
                    + "'; use ack, complete, retry, fail, terminal or heartbeat");
        }
        JsonNode body = Json.parse(Requests.body(ctx, maxBody));
        String token = Requests.textField(body, "claim_token", 64);
        if (token == null) {
            throw Requests.malformed("the claim_token the claim returned is required");
        }
        JobClaim claim = sluice.queue(ctx.pathParam("queue")).claimed(id, token);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", id);
        boolean held = switch (action) {
            case "ack" -> claim.ack();
            case "complete" -> {
                if (!body.isObject()) {
                    throw Requests.malformed("the body must be a JSON object");
                }
                StreamRoutes.Payload result = StreamRoutes.payload(((ObjectNode) body.deepCopy()).without("claim_token"),
                        Set.of("payload", "payload_text", "payload_base64", "content_type"));
                yield claim.complete(result.bytes(), result.contentType());
            }
            case "retry" -> claim.retry(Requests.durationField(body, "delay", Duration.ZERO));
            case "fail" -> claim.fail(Optional.ofNullable(Requests.textField(body, "error", 16_000)).orElse("failed (over HTTP)"));
            case "terminal" -> claim.terminal(Optional.ofNullable(Requests.textField(body, "reason", 16_000))
                    .orElse("terminal (over HTTP)"));
            case "heartbeat" -> {
                Optional<Instant> until = claim.heartbeat();
                until.ifPresent(u -> m.put("claim_expires_at", u.toString()));
                yield until.isPresent();
            }
            default -> throw Requests.malformed("unknown job action '" + Echo.of(action)
                    + "'; use ack, complete, retry, fail, terminal or heartbeat");
        };
        if (!held) {
            throw new SluiceException(ErrorCode.JOB_CLAIM_LOST, "job " + id + " of queue '" + Echo.of(ctx.pathParam("queue"))
                    + "' is not held by that claim token (expired, resolved already, or another claim's)");
        }
        Json.reply(ctx, 200, m);
    }
}
