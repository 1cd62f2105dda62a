package dev.sluice.internal.produce;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.ErrorCode;
import dev.sluice.ProduceOptions;
import dev.sluice.SchemaVersion;
import dev.sluice.Serde;
import dev.sluice.SluiceException;
import dev.sluice.internal.text.Echo;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

/**
 * Validates and encodes one message before any round trip: payload present and within the stream's
 * limit, keys and headers within bounds, options consistent. Every rejection is a coded error.
 */
public final class MessageEncoder<T> {
    public static final int MAX_KEY_LENGTH = 256;
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Serde<T> serde;
    private final int schemaVersion;
    /** Adds the caller's trace context to the headers (docs/tracing.md); no-op without OpenTelemetry. */
    private final dev.sluice.internal.tracing.Tracing tracing;

    /** An encoder that writes the headers as given (no tracing: tools, schedule fires). */
    public MessageEncoder(Serde<T> serde, Class<T> payloadType) {
        this(serde, payloadType, dev.sluice.internal.tracing.NoTracing.INSTANCE);
    }

    /** An encoder of a client's producer: {@code tracing} adds the producing thread's trace context to the headers. */
    public MessageEncoder(Serde<T> serde, Class<T> payloadType, dev.sluice.internal.tracing.Tracing tracing) {
        this.serde = serde;
        this.tracing = tracing;
        this.schemaVersion = schemaVersionOf(payloadType);
        if (schemaVersion < 1) {
            throw new SluiceException(ErrorCode.INVALID_OPTIONS, "@SchemaVersion on " + payloadType.getName()
                    + " must be at least 1 (got " + schemaVersion + ")");
        }
    }

    /** The payload type's schema version ({@link SchemaVersion}, 1 without it; not checked here). */
    public static int schemaVersionOf(Class<?> type) {
        SchemaVersion v = type.getAnnotation(SchemaVersion.class);
        return v == null ? 1 : v.value();
    }

    public int schemaVersion() {
        return schemaVersion;
    }

    /** Encodes a message for a stream whose payload limit is {@code maxPayloadBytes}. */
    public Encoded encode(T payload, ProduceOptions options, int maxPayloadBytes) {
        if (payload == null) {
            throw new SluiceException(ErrorCode.NULL_PAYLOAD, "the payload is null");
        }
        ProduceOptions o = options == null ? ProduceOptions.NONE : options;
        byte[] bytes;
        try {
            bytes = serde.serialize(payload);
        } catch (Exception e) {
            throw new SluiceException(ErrorCode.PAYLOAD_NOT_SERIALIZABLE, "the payload of type "
                    + payload.getClass().getName() + " could not be serialized: " + e.getClass().getSimpleName(), e);
        }
        if (bytes == null) {
            throw new SluiceException(ErrorCode.NULL_PAYLOAD, "the serde returned no bytes");
        }
        if (bytes.length > maxPayloadBytes) {
            throw new SluiceException(ErrorCode.PAYLOAD_TOO_LARGE, "the payload is " + bytes.length
                    + " bytes; the stream accepts at most " + maxPayloadBytes);
        }
        checkKey("message key", o.messageKey());
        checkKey("routing key", o.routingKey());
        checkKey("idempotency key", o.idempotencyKey());
        if (o.compactionRank() != null && o.messageKey() == null) {
            throw new SluiceException(ErrorCode.INVALID_OPTIONS, "compaction needs a message key (the compaction identity)");
        }
        return new Encoded(bytes, serde.contentType(), schemaVersion, o.messageKey(), o.routingKey(),
                tracing.encodeHeaders(o.headers()), optionsJson(o), o.compactionRank(), idempotencyUuid(o.idempotencyKey()));
    }

    /** The name-based uuid an idempotency key is stored as. */
    public static UUID idempotencyUuid(String key) {
        return key == null ? null : UUID.nameUUIDFromBytes(("sluice.idempotency:" + key).getBytes(StandardCharsets.UTF_8));
    }

    private static void checkKey(String what, String key) {
        if (key == null) {
            return;
        }
        if (key.isEmpty() || key.length() > MAX_KEY_LENGTH) {
            throw new SluiceException(ErrorCode.INVALID_KEY, what + " must be 1 to " + MAX_KEY_LENGTH
                    + " characters (got " + key.length() + ")");
        }
        int control = Echo.firstControl(key);
        if (control >= 0) {
            // Keys are shown by operators' tools; a control character could drive their terminal.
            throw new SluiceException(ErrorCode.INVALID_KEY, what + " must not contain control characters (found "
                    + Echo.describeControl(key, control) + ")");
        }
    }


    private static String optionsJson(ProduceOptions o) {
        if (o.deliverAt() == null) {
            return null;
        }
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("deliver_at", o.deliverAt().toString());
        return write(doc);
    }

    private static String write(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
