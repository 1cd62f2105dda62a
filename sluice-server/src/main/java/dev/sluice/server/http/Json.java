package dev.sluice.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import dev.sluice.server.json.ControlEscapes;
import java.io.IOException;

/**
 * The server's JSON: one mapper whose output escapes every control character (C0, DEL, C1, the bidirectional
 * and line controls) so that a name or an error text shown by a browser or a terminal cannot drive it.
 */
public final class Json {
    /** The mapper for requests and responses. */
    public static final ObjectMapper MAPPER = mapper();

    private Json() {
    }

    private static ObjectMapper mapper() {
        ObjectMapper m = new ObjectMapper();
        m.getFactory().setCharacterEscapes(ControlEscapes.forPages());
        return m;
    }

    /** A new empty object node. */
    public static ObjectNode object() {
        return JsonNodeFactory.instance.objectNode();
    }

    /** A new empty array node. */
    public static ArrayNode array() {
        return JsonNodeFactory.instance.arrayNode();
    }

    /** {@code value} (maps, lists, nodes, strings, numbers) as JSON bytes. */
    public static byte[] bytes(Object value) {
        try {
            return MAPPER.writeValueAsBytes(value);
        } catch (IOException e) {
            throw new IllegalStateException("a response did not serialize: " + e.getClass().getSimpleName(), e);
        }
    }

    /** Answers {@code ctx} with {@code status} and {@code value} as JSON. */
    public static void reply(io.javalin.http.Context ctx, int status, Object value) {
        ctx.status(status).contentType("application/json").result(bytes(value));
    }

    /** Parses a request body; anything but one JSON document is MALFORMED_REQUEST (the body is not echoed). */
    public static JsonNode parse(byte[] body) {
        if (body.length == 0) {
            return JsonNodeFactory.instance.objectNode();
        }
        try {
            JsonNode n = MAPPER.readTree(body);
            return n == null ? JsonNodeFactory.instance.objectNode() : n;
        } catch (IOException e) {
            throw new SluiceException(ErrorCode.MALFORMED_REQUEST, "the request body is not a JSON document");
        }
    }
}
