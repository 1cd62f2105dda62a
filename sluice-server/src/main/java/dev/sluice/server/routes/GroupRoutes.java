package dev.sluice.server.routes;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.ConcurrencyPolicy;
import dev.sluice.ConsumerGroup;
import dev.sluice.DeadLetter;
import dev.sluice.ErrorCode;
import dev.sluice.GroupConfig;
import dev.sluice.GroupInfo;
import dev.sluice.Page;
import dev.sluice.RetryPolicy;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.StartPosition;
import dev.sluice.TokenRole;
import dev.sluice.internal.text.Echo;
import dev.sluice.server.http.Json;
import dev.sluice.server.http.Requests;
import dev.sluice.server.http.Routes;
import dev.sluice.server.json.Inputs;
import dev.sluice.server.json.StreamDocuments;
import io.javalin.http.Context;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Consumer groups: list, get (with buckets), register, rewind; dead letters paged, redriven, purged. */
final class GroupRoutes {
    private static final Set<String> CONFIG_FIELDS = Set.of("start", "bindings", "concurrency", "partitions", "max_attempts",
            "dead_letter_retention");
    private final Sluice sluice;

    GroupRoutes(Sluice sluice) {
        this.sluice = sluice;
    }

    void register(Routes r) {
        String base = "/api/v1/streams/{stream}/groups";
        r.get(base, TokenRole.READ, "List a stream's consumer groups", ctx -> Json.reply(ctx, 200, Map.of("groups",
                sluice.stream(ctx.pathParam("stream")).consumerGroups().stream().map(StreamDocuments::group).toList())));
        r.get(base + "/{group}", TokenRole.READ, "Get a group (cursor, lag, retrying, dead; buckets when partitioned)", this::get);
        r.put(base + "/{group}", TokenRole.ADMIN, "Register a group", this::put);
        r.action(base + "/{group}", List.of("rewind"), TokenRole.ADMIN, "Rewind a group ({\"to_id\":N} or {\"to_time\":T}, force)", this::rewind);
        r.get(base + "/{group}/dead", TokenRole.READ, "Dead letters, keyset-paged (limit, cursor)", this::dead);
        r.post(base + "/{group}/dead:redrive", TokenRole.ADMIN, "Redrive dead letters ({\"ids\":[...]} or {\"all\":true})",
                ctx -> Json.reply(ctx, 200, Map.of("redriven", ids(ctx, group(ctx), true))));
        r.post(base + "/{group}/dead:purge", TokenRole.ADMIN, "Purge dead letters ({\"ids\":[...]} or {\"all\":true})",
                ctx -> Json.reply(ctx, 200, Map.of("purged", ids(ctx, group(ctx), false))));
    }

    private ConsumerGroup<byte[]> group(Context ctx) {
        return sluice.stream(ctx.pathParam("stream")).consumerGroup(ctx.pathParam("group"));
    }

    private void get(Context ctx) {
        ConsumerGroup<byte[]> g = group(ctx);
        GroupInfo info = g.get().orElseThrow(() -> notFound(ctx));
        Map<String, Object> m = StreamDocuments.group(info);
        if (info.config().partitioned()) {
            m.put("buckets", g.partitions().stream().map(StreamDocuments::bucket).toList());
        }
        Json.reply(ctx, 200, m);
    }

    private static SluiceException notFound(Context ctx) {
        return new SluiceException(ErrorCode.GROUP_NOT_FOUND, "stream '" + Echo.of(ctx.pathParam("stream")) + "' has no group '"
                + Echo.of(ctx.pathParam("group")) + "'");
    }

    private void put(Context ctx) {
        ConsumerGroup<byte[]> g = group(ctx);
        GroupConfig config = config(Requests.json(ctx));
        boolean existed = g.get().isPresent();
        Json.reply(ctx, existed ? 200 : 201, StreamDocuments.group(g.register(config)));
    }

    /** A group config document: start, bindings, concurrency, partitions, max_attempts, dead_letter_retention. */
    static GroupConfig config(JsonNode doc) {
        if (!doc.isObject()) {
            throw Requests.malformed("the body must be a group config object");
        }
        for (Iterator<String> it = doc.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!CONFIG_FIELDS.contains(f)) {
                throw Requests.malformed("unknown config field '" + Echo.of(f) + "'");
            }
        }
        GroupConfig.Builder b = GroupConfig.builder();
        JsonNode start = doc.get("start");
        if (start != null && !start.isNull()) {
            b.start(start.isIntegralNumber() ? StartPosition.atId(start.asLong()) : startPosition(start.asText()));
        }
        JsonNode bindings = doc.get("bindings");
        if (bindings != null && !bindings.isNull()) {
            if (!bindings.isArray()) {
                throw Requests.malformed("bindings must be an array of patterns");
            }
            List<String> patterns = new ArrayList<>();
            bindings.forEach(n -> patterns.add(n.asText()));
            b.bindings(patterns);
        }
        String concurrency = Requests.textField(doc, "concurrency", 32);
        if (concurrency != null) {
            b.concurrency(ConcurrencyPolicy.parse(concurrency));
        }
        if (doc.hasNonNull("partitions")) {
            b.partitions(Requests.intField(doc, "partitions", 0, 1, GroupConfig.MAX_PARTITIONS));
        }
        if (doc.hasNonNull("max_attempts")) {
            b.retry(RetryPolicy.DEFAULT.withMaxAttempts(Requests.intField(doc, "max_attempts", 0, 1, 1_000_000)));
        }
        if (doc.hasNonNull("dead_letter_retention")) {
            b.deadLetterRetention(Requests.durationField(doc, "dead_letter_retention", null));
        }
        return b.build();
    }

    /** {@code beginning}, {@code head}, an id, or an ISO-8601 time (the CLI's --start). */
    static StartPosition startPosition(String s) {
        return Inputs.startPosition(s, GroupRoutes::startId, t -> time(t, "start"));
    }

    private static long startId(String s) {
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            throw Requests.malformed("start '" + Echo.of(s) + "' is not beginning, head, an id or an ISO-8601 time");
        }
    }

    private static Instant time(String s, String what) {
        try {
            return Instant.parse(s);
        } catch (DateTimeParseException e) {
            throw Requests.malformed(what + " '" + Echo.of(s) + "' is not beginning, head, an id or an ISO-8601 time");
        }
    }

    private void rewind(Context ctx) {
        String group = ctx.pathParam("group");
        if (!group.endsWith(":rewind")) {
            throw Requests.malformed("POST on a group is only ':rewind' (POST .../groups/{group}:rewind)");
        }
        ConsumerGroup<byte[]> g = sluice.stream(ctx.pathParam("stream")).consumerGroup(group.substring(0, group.length() - 7));
        JsonNode body = Requests.json(ctx);
        boolean force = Requests.boolField(body, "force", false);
        String toTime = Requests.textField(body, "to_time", 64);
        JsonNode toId = body.get("to_id");
        GroupInfo info;
        if (toId != null && !toId.isNull() && toTime == null) {
            if (!toId.isIntegralNumber() || toId.asLong() < 0) {
                throw Requests.malformed("to_id must be a message id");
            }
            info = g.admin().rewindToId(toId.asLong(), force);
        } else if (toTime != null && (toId == null || toId.isNull())) {
            info = g.admin().rewindToTime(time(toTime, "to_time"), force);
        } else {
            throw Requests.malformed("give exactly one of to_id or to_time");
        }
        Json.reply(ctx, 200, StreamDocuments.group(info));
    }

    private void dead(Context ctx) {
        int limit = Requests.intParam(ctx, "limit", 50, 1, 1000);
        Page<DeadLetter> page = group(ctx).admin().deadLetters(ctx.queryParam("cursor"), limit);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("dead_letters", page.items().stream().map(StreamDocuments::deadLetter).toList());
        m.put("next_cursor", page.next());
        Json.reply(ctx, 200, m);
    }

    /** Redrives or purges the named ids or all; the count changed. */
    static int ids(Context ctx, ConsumerGroup<byte[]> g, boolean redrive) {
        JsonNode body = Requests.json(ctx);
        boolean all = Requests.boolField(body, "all", false);
        List<Long> ids = idList(body, all);
        if (redrive) {
            return all ? g.admin().redriveAll() : g.admin().redrive(ids);
        }
        return all ? g.admin().purgeAll() : g.admin().purge(ids);
    }

    /** The {@code ids} array (1 to 10,000 ids) unless {@code all}; both or neither is refused. */
    static List<Long> idList(JsonNode body, boolean all) {
        JsonNode ids = body.get("ids");
        if (all == (ids != null && !ids.isNull())) {
            throw Requests.malformed("give either {\"ids\":[...]} or {\"all\":true}");
        }
        List<Long> out = new ArrayList<>();
        if (all) {
            return out;
        }
        if (!ids.isArray() || ids.isEmpty() || ids.size() > 10_000) {
            throw Requests.malformed("ids must be an array of 1 to 10000 ids");
        }
        for (JsonNode n : ids) {
            if (!n.isIntegralNumber() || !n.canConvertToLong() || n.asLong() < 1) {
                throw Requests.malformed("ids must be positive integers");
            }
            out.add(n.asLong());
        }
        return out;
    }
}
