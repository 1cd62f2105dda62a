package dev.sluice.server.routes;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.Message;
import dev.sluice.Outcome;
import dev.sluice.TokenRole;
import dev.sluice.internal.text.Echo;
import dev.sluice.server.http.Json;
import dev.sluice.server.http.Requests;
import dev.sluice.server.http.Routes;
import dev.sluice.server.json.StreamDocuments;
import dev.sluice.server.json.Texts;
import dev.sluice.server.pull.PullBridge;
import io.javalin.http.Context;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Pull consumption over HTTP: claim messages of a group under a lease (long-polling for the first), give
 * an outcome per message, renew the lease. The guarantees are a handler's ({@link PullBridge}).
 */
final class ClaimRoutes {
    private final PullBridge pull;

    ClaimRoutes(PullBridge pull) {
        this.pull = pull;
    }

    void register(Routes r) {
        String base = "/api/v1/streams/{stream}/groups/{group}/claims";
        r.post(base, TokenRole.WRITE, "Claim messages ({\"max\":N,\"wait\":\"5s\",\"lease\":\"30s\"}; long-polls; "
                + "\"resolve\":{\"claim\":C,\"outcomes\":[...]} first records the previous claim's outcomes)", this::claim);
        r.post(base + "/{claim}/outcomes", TokenRole.WRITE, "Give outcomes: success, retry, terminal, delay", this::outcomes);
        r.action(base + "/{claim}", List.of("renew"), TokenRole.WRITE, "Renew a claim's lease ({\"lease\":\"30s\"} optional)", this::renew);
    }

    private void claim(Context ctx) {
        JsonNode body = Requests.json(ctx);
        int max = Requests.intField(body, "max", 10, 1, 1000);
        Duration wait = Requests.durationField(body, "wait", Duration.ZERO);
        Duration lease = Requests.durationField(body, "lease", pull.options().defaultLease());
        Map<String, Object> m = new LinkedHashMap<>();
        // The outcomes of the previous claim may ride on the next claim: one round trip per batch instead of two.
        JsonNode previous = body.get("resolve");
        if (previous != null && !previous.isNull()) {
            String claim = Requests.textField(previous, "claim", 64);
            if (claim == null) {
                throw Requests.malformed("resolve needs the claim its outcomes belong to");
            }
            List<Long> unknown = pull.outcomes(claim, outcomes(previous));
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("claim", claim);
            r.put("accepted", previous.get("outcomes").size() - unknown.size());
            r.put("unknown", unknown);
            m.put("resolved", r);
        }
        PullBridge.Claimed c = pull.claim(ctx.pathParam("stream"), ctx.pathParam("group"), max, wait, lease);
        m.put("claim", c.claim());
        m.put("expires_at", Texts.text(c.expiresAt()));
        m.put("messages", c.messages().stream().map(ClaimRoutes::message).toList());
        Json.reply(ctx, 200, m);
    }

    private static Map<String, Object> message(Message<byte[]> msg) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", msg.id());
        m.put("message_key", msg.messageKey());
        m.put("routing_key", msg.routingKey());
        m.put("headers", msg.headers());
        m.put("attempt", msg.attempt());
        m.put("delays", msg.delays());
        m.put("produced_at", Texts.text(msg.producedAt()));
        m.put("schema_version", msg.schemaVersion());
        StreamDocuments.payload(m, msg.payload());
        return m;
    }

    private void outcomes(Context ctx) {
        JsonNode body = Requests.json(ctx);
        Map<Long, Outcome> outcomes = outcomes(body);
        List<Long> unknown = pull.outcomes(ctx.pathParam("claim"), outcomes);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("accepted", outcomes.size() - unknown.size());
        m.put("unknown", unknown);
        Json.reply(ctx, 200, m);
    }

    /** The {@code outcomes} array of {@code body}: 1 to 10,000 {@code {"id":N,"outcome":...}}. */
    private static Map<Long, Outcome> outcomes(JsonNode body) {
        JsonNode list = body.get("outcomes");
        if (list == null || !list.isArray() || list.isEmpty() || list.size() > 10_000) {
            throw Requests.malformed("outcomes must be an array of 1 to 10000 {\"id\":N,\"outcome\":\"success|retry|terminal|delay\"}");
        }
        Map<Long, Outcome> outcomes = new LinkedHashMap<>();
        for (JsonNode o : list) {
            JsonNode id = o.get("id");
            if (id == null || !id.isIntegralNumber() || id.asLong() < 1) {
                throw Requests.malformed("each outcome needs the message id");
            }
            outcomes.put(id.asLong(), outcome(o));
        }
        return outcomes;
    }

    /** One outcome document: {@code success}; {@code retry} (optional {@code after}); {@code terminal} (reason); {@code delay} (after). */
    static Outcome outcome(JsonNode o) {
        String kind = Requests.textField(o, "outcome", 16);
        if (kind == null) {
            throw Requests.malformed("each outcome needs 'outcome': success, retry, terminal or delay");
        }
        return switch (kind) {
            case "success" -> Outcome.success();
            case "retry" -> {
                Duration after = Requests.durationField(o, "after", null);
                yield after == null ? Outcome.retry() : Outcome.retry(after);
            }
            case "terminal" -> {
                String reason = Requests.textField(o, "reason", 16_000);
                yield Outcome.terminal(reason == null ? "terminal (given over HTTP)" : reason);
            }
            case "delay" -> {
                Duration after = Requests.durationField(o, "after", null);
                if (after == null) {
                    throw Requests.malformed("a delay outcome needs 'after'");
                }
                yield Outcome.delay(after);
            }
            default -> throw Requests.malformed("unknown outcome '" + Echo.of(kind) + "'; use success, retry, terminal or delay");
        };
    }

    private void renew(Context ctx) {
        String claim = ctx.pathParam("claim");
        if (!claim.endsWith(":renew")) {
            throw Requests.malformed("POST on a claim is only ':renew' (POST .../claims/{claim}:renew)");
        }
        JsonNode body = Requests.json(ctx);
        Duration lease = Requests.durationField(body, "lease", null);
        Instant until = pull.renew(claim.substring(0, claim.length() - 6), lease);
        Json.reply(ctx, 200, Map.of("expires_at", until.toString()));
    }
}
