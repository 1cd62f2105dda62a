package dev.sluice.server.routes;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.DeliveryLogMode;
import dev.sluice.ErrorCode;
import dev.sluice.Outgoing;
import dev.sluice.ProduceOptions;
import dev.sluice.Produced;
import dev.sluice.ReadOptions;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.StoredMessage;
import dev.sluice.StreamConfig;
import dev.sluice.StreamInfo;
import dev.sluice.TokenRole;
import dev.sluice.server.http.Json;
import dev.sluice.server.http.Requests;
import dev.sluice.server.http.Routes;
import dev.sluice.server.json.StreamDocuments;
import io.javalin.http.Context;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Streams: list, get, register (the whole config document), destroy, produce (one or a batch), read. */
public final class StreamRoutes {
    /** Most messages one batch request may carry. */
    public static final int MAX_BATCH = 1_000;
    private static final String HEADER_PREFIX = "sluice-header-";
    private static final Set<String> CONFIG_FIELDS = Set.of("partition_size", "retention", "allow_drop_past_committed",
            "idempotency_key_ttl", "empty_compaction_head_ttl", "delivery_log_mode", "max_payload_bytes", "delivery_log_retention");
    private static final Set<String> BATCH_FIELDS = Set.of("payload", "payload_text", "payload_base64", "content_type",
            "message_key", "routing_key", "idempotency_key", "headers");

    private final Sluice sluice;
    private final ProducerCache producers;
    private final long maxBody;

    StreamRoutes(Sluice sluice, ProducerCache producers, long maxBody) {
        this.sluice = sluice;
        this.producers = producers;
        this.maxBody = maxBody;
    }

    void register(Routes r) {
        String base = "/api/v1/streams";
        r.get(base, TokenRole.READ, "List streams", ctx -> Json.reply(ctx, 200,
                Map.of("streams", sluice.streams().stream().map(StreamDocuments::stream).toList())));
        r.get(base + "/{stream}", TokenRole.READ, "Get a stream", ctx -> Json.reply(ctx, 200, StreamDocuments.stream(
                sluice.stream(ctx.pathParam("stream")).get().orElseThrow(() -> notFound(ctx.pathParam("stream"))))));
        r.put(base + "/{stream}", TokenRole.ADMIN, "Register a stream (or update its config)", this::put);
        r.delete(base + "/{stream}", TokenRole.ADMIN, "Destroy a stream (force=true when it holds messages)", ctx -> {
            String name = ctx.pathParam("stream");
            sluice.stream(name).destroy("true".equals(ctx.queryParam("force")));
            ctx.status(204);
        });
        r.post(base + "/{stream}/messages", TokenRole.WRITE, "Produce one message (the body is the payload)", this::produce);
        r.post(base + "/{stream}/messages:batch", TokenRole.WRITE, "Produce a batch (all or nothing)", this::batch);
        r.get(base + "/{stream}/messages", TokenRole.READ, "Read messages after an id (fenced)", this::read);
    }

    static SluiceException notFound(String stream) {
        return new SluiceException(ErrorCode.STREAM_NOT_FOUND, "no stream named '" + dev.sluice.internal.text.Echo.of(stream) + "'");
    }

    private void put(Context ctx) {
        String name = ctx.pathParam("stream");
        JsonNode body = Requests.json(ctx);
        JsonNode doc = body.has("config") && body.get("config").isObject() ? body.get("config") : body;
        StreamConfig config = config(doc);
        boolean existed = sluice.stream(name).get().isPresent();
        StreamInfo info = sluice.stream(name).register(config);
        Json.reply(ctx, existed ? 200 : 201, StreamDocuments.stream(info));
    }

    /** A config document ({@link StreamDocuments#config}'s fields; absent fields take their defaults). */
    static StreamConfig config(JsonNode doc) {
        if (!doc.isObject()) {
            throw Requests.malformed("the body must be a stream config object");
        }
        for (Iterator<String> it = doc.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!CONFIG_FIELDS.contains(f)) {
                throw Requests.malformed("unknown config field '" + dev.sluice.internal.text.Echo.of(f) + "'");
            }
        }
        StreamConfig.Builder b = StreamConfig.builder();
        JsonNode ps = doc.get("partition_size");
        if (ps != null && !ps.isNull()) {
            if (!ps.canConvertToLong() || !ps.isIntegralNumber()) {
                throw Requests.malformed("partition_size must be an integer");
            }
            b.partitionSize(ps.asLong());
        }
        if (doc.has("retention")) {
            b.retention(Requests.durationField(doc, "retention", null));
        }
        b.allowDropPastCommitted(Requests.boolField(doc, "allow_drop_past_committed", false));
        if (doc.hasNonNull("idempotency_key_ttl")) {
            b.idempotencyKeyTtl(Requests.durationField(doc, "idempotency_key_ttl", null));
        }
        if (doc.hasNonNull("empty_compaction_head_ttl")) {
            b.emptyCompactionHeadTtl(Requests.durationField(doc, "empty_compaction_head_ttl", null));
        }
        String mode = Requests.textField(doc, "delivery_log_mode", 32);
        if (mode != null) {
            b.deliveryLogMode(DeliveryLogMode.parse(mode));
        }
        if (doc.hasNonNull("max_payload_bytes")) {
            b.maxPayloadBytes(Requests.intField(doc, "max_payload_bytes", 0, 1, Integer.MAX_VALUE));
        }
        if (doc.hasNonNull("delivery_log_retention")) {
            b.deliveryLogRetention(Requests.durationField(doc, "delivery_log_retention", null));
        }
        return b.build();
    }

    private void produce(Context ctx) {
        String stream = ctx.pathParam("stream");
        byte[] payload = Requests.body(ctx, maxBody);
        ProduceOptions.Builder o = ProduceOptions.builder();
        String idem = ctx.header("Idempotency-Key");
        if (idem != null) {
            o.idempotencyKey(idem);
        }
        String key = ctx.header("Sluice-Message-Key");
        if (key != null) {
            o.messageKey(key);
        }
        String routing = ctx.header("Sluice-Routing-Key");
        if (routing != null) {
            o.routingKey(routing);
        }
        Map<String, String> headers = new LinkedHashMap<>();
        for (String h : java.util.Collections.list(ctx.req().getHeaderNames())) {
            if (h.length() > HEADER_PREFIX.length() && h.regionMatches(true, 0, HEADER_PREFIX, 0, HEADER_PREFIX.length())) {
                headers.put(h.substring(HEADER_PREFIX.length()).toLowerCase(java.util.Locale.ROOT), ctx.header(h));
            }
        }
        if (!headers.isEmpty()) {
            o.headers(headers);
        }
        Produced p = producers.get(stream, ctx.contentType()).produce(payload, o.build());
        Json.reply(ctx, p.duplicate() ? 200 : 201, produced(p));
    }

    private static Map<String, Object> produced(Produced p) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", p.id());
        m.put("duplicate", p.duplicate());
        return m;
    }

    private void batch(Context ctx) {
        String stream = ctx.pathParam("stream");
        JsonNode body = Json.parse(Requests.body(ctx, maxBody));
        JsonNode items = body.isObject() && body.has("messages") ? body.get("messages") : body;
        if (!items.isArray() || items.isEmpty()) {
            throw Requests.malformed("a batch is a non-empty JSON array of messages");
        }
        if (items.size() > MAX_BATCH) {
            throw new SluiceException(ErrorCode.REQUEST_TOO_LARGE, "a batch holds at most " + MAX_BATCH + " messages (got "
                    + items.size() + ")");
        }
        String contentType = null;
        List<Outgoing<byte[]>> out = new ArrayList<>(items.size());
        for (JsonNode item : items) {
            Payload p = payload(item, BATCH_FIELDS);
            if (contentType == null) {
                contentType = p.contentType();
            } else if (!contentType.equals(p.contentType())) {
                throw Requests.malformed("every message of a batch has the same content type");
            }
            ProduceOptions.Builder o = ProduceOptions.builder();
            String idem = Requests.textField(item, "idempotency_key", 1024);
            if (idem != null) {
                o.idempotencyKey(idem);
            }
            String key = Requests.textField(item, "message_key", 1024);
            if (key != null) {
                o.messageKey(key);
            }
            String routing = Requests.textField(item, "routing_key", 1024);
            if (routing != null) {
                o.routingKey(routing);
            }
            Map<String, String> headers = headers(item);
            if (!headers.isEmpty()) {
                o.headers(headers);
            }
            out.add(Outgoing.of(p.bytes(), o.build()));
        }
        List<Produced> produced = producers.get(stream, contentType).produceBatch(out);
        boolean anyNew = produced.stream().anyMatch(x -> !x.duplicate());
        Json.reply(ctx, anyNew ? 201 : 200, Map.of("messages", produced.stream().map(StreamRoutes::produced).toList()));
    }

    /** A payload given in JSON: {@code payload} (any JSON value), {@code payload_text} or {@code payload_base64}. */
    record Payload(byte[] bytes, String contentType) {
    }

    /** The payload of a JSON message or job document; fields outside {@code allowed} are refused. */
    static Payload payload(JsonNode item, Set<String> allowed) {
        if (!item.isObject()) {
            throw Requests.malformed("each message is a JSON object");
        }
        for (Iterator<String> it = item.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!allowed.contains(f)) {
                throw Requests.malformed("unknown field '" + dev.sluice.internal.text.Echo.of(f) + "'");
            }
        }
        int given = (item.has("payload") ? 1 : 0) + (item.has("payload_text") ? 1 : 0) + (item.has("payload_base64") ? 1 : 0);
        if (given != 1) {
            throw Requests.malformed("give exactly one of payload (JSON), payload_text or payload_base64");
        }
        String ct = Requests.textField(item, "content_type", 255);
        if (item.has("payload")) {
            return new Payload(Json.bytes(item.get("payload")), ct == null ? "application/json" : ProducerCache.contentType(ct));
        }
        if (item.has("payload_text")) {
            String text = Requests.textField(item, "payload_text", Integer.MAX_VALUE);
            if (text == null) {
                throw Requests.malformed("payload_text must be a string");
            }
            return new Payload(text.getBytes(java.nio.charset.StandardCharsets.UTF_8),
                    ct == null ? "text/plain; charset=utf-8" : ProducerCache.contentType(ct));
        }
        String b64 = Requests.textField(item, "payload_base64", Integer.MAX_VALUE);
        try {
            return new Payload(Base64.getDecoder().decode(b64 == null ? "" : b64), ProducerCache.contentType(ct));
        } catch (IllegalArgumentException e) {
            throw Requests.malformed("payload_base64 is not base64");
        }
    }

    /** A {@code headers} object of string values (empty when absent). */
    static Map<String, String> headers(JsonNode item) {
        JsonNode h = item.get("headers");
        Map<String, String> out = new LinkedHashMap<>();
        if (h == null || h.isNull()) {
            return out;
        }
        if (!h.isObject()) {
            throw Requests.malformed("headers must be an object of string values");
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = h.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!e.getValue().isTextual()) {
                throw Requests.malformed("headers must be an object of string values");
            }
            out.put(e.getKey(), e.getValue().asText());
        }
        return out;
    }

    private void read(Context ctx) {
        String stream = ctx.pathParam("stream");
        long after = Requests.longParam(ctx, "after", 0, 0);
        int limit = Requests.intParam(ctx, "limit", 100, 1, 1000);
        List<StoredMessage> messages = sluice.stream(stream).read(after, limit, ReadOptions.defaults());
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("messages", messages.stream().map(StreamDocuments::message).toList());
        m.put("next_after", messages.isEmpty() ? after : messages.get(messages.size() - 1).id());
        Json.reply(ctx, 200, m);
    }
}
