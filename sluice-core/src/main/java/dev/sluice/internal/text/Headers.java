package dev.sluice.internal.text;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The one codec of message and job headers: the limits, the validation with coded errors, and the JSON object
 * they are stored as ({@code headers jsonb}). Streams and queues use it alike.
 */
public final class Headers {
    /** At most this many headers. */
    public static final int MAX_HEADERS = 64;
    /** A header name is 1 to this many characters. */
    public static final int MAX_HEADER_NAME_LENGTH = 128;
    /** The stored JSON object is at most this many UTF-8 bytes. */
    public static final int MAX_HEADERS_BYTES = 8192;

    private static final ObjectMapper JSON = new ObjectMapper();

    private Headers() {
    }

    /**
     * Validates and encodes headers; {@code null} for none.
     *
     * @throws SluiceException {@link ErrorCode#INVALID_HEADERS} for too many headers, a name that is empty, too
     *                         long or holds a control character, a value that is null or holds NUL, or a document
     *                         over {@link #MAX_HEADERS_BYTES}
     */
    public static String encode(Map<String, String> headers) {
        if (headers.isEmpty()) {
            return null;
        }
        if (headers.size() > MAX_HEADERS) {
            throw new SluiceException(ErrorCode.INVALID_HEADERS, "at most " + MAX_HEADERS + " headers (got " + headers.size() + ")");
        }
        for (Map.Entry<String, String> h : headers.entrySet()) {
            String name = h.getKey();
            if (name == null || name.isEmpty() || name.length() > MAX_HEADER_NAME_LENGTH || Echo.firstControl(name) >= 0) {
                throw new SluiceException(ErrorCode.INVALID_HEADERS, "header names must be 1 to "
                        + MAX_HEADER_NAME_LENGTH + " characters without control characters (got '" + Echo.of(name) + "')");
            }
            // Values may hold control characters other than NUL (PostgreSQL text cannot); tools escape them on output.
            if (h.getValue() == null || h.getValue().indexOf('\0') >= 0) {
                throw new SluiceException(ErrorCode.INVALID_HEADERS, "header '" + Echo.of(name) + "' needs a value without NUL characters");
            }
        }
        String json;
        try {
            json = JSON.writeValueAsString(headers);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
        if (json.getBytes(StandardCharsets.UTF_8).length > MAX_HEADERS_BYTES) {
            throw new SluiceException(ErrorCode.INVALID_HEADERS, "headers exceed " + MAX_HEADERS_BYTES + " bytes");
        }
        return json;
    }

    /**
     * Decodes stored headers (a JSON object as text); an empty map for none. A stored value that is not an object
     * of strings — only SQL written by hand can make one — also reads as none, so one such row cannot stop a
     * consumer or a worker.
     */
    @SuppressWarnings("unchecked")
    public static Map<String, String> decode(String json) {
        if (json == null) {
            return Map.of();
        }
        try {
            Object doc = JSON.readValue(json, Object.class);
            if (!(doc instanceof Map<?, ?> map) || !map.values().stream().allMatch(v -> v instanceof String)) {
                return Map.of();
            }
            return Collections.unmodifiableMap(new LinkedHashMap<>((Map<String, String>) map));
        } catch (IOException e) {
            return Map.of();
        }
    }
}
