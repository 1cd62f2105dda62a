package dev.sluice;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;

/**
 * Turns payloads into stored bytes and back. Defaults ({@link #forType}): {@code byte[]} passes through,
 * {@code String} is UTF-8, anything else is JSON via Jackson.
 *
 * @param <T> the payload type
 */
public interface Serde<T> {
    /** Encodes a payload; a failure becomes {@link ErrorCode#PAYLOAD_NOT_SERIALIZABLE}. */
    byte[] serialize(T payload) throws Exception;

    /** Decodes stored bytes. */
    T deserialize(byte[] bytes) throws Exception;

    /** The content type stored with every message. */
    String contentType();

    /** Raw bytes, stored as given. */
    static Serde<byte[]> bytes() {
        return new Serde<>() {
            @Override
            public byte[] serialize(byte[] payload) {
                return payload;
            }

            @Override
            public byte[] deserialize(byte[] bytes) {
                return bytes;
            }

            @Override
            public String contentType() {
                return "application/octet-stream";
            }
        };
    }

    /** UTF-8 text. */
    static Serde<String> utf8() {
        return new Serde<>() {
            @Override
            public byte[] serialize(String payload) {
                return payload.getBytes(StandardCharsets.UTF_8);
            }

            @Override
            public String deserialize(byte[] bytes) {
                return new String(bytes, StandardCharsets.UTF_8);
            }

            @Override
            public String contentType() {
                return "text/plain; charset=utf-8";
            }
        };
    }

    /** JSON with the given mapper. */
    static <T> Serde<T> json(ObjectMapper mapper, Class<T> type) {
        return new Serde<>() {
            @Override
            public byte[] serialize(T payload) throws Exception {
                return mapper.writeValueAsBytes(payload);
            }

            @Override
            public T deserialize(byte[] bytes) throws Exception {
                return mapper.readValue(bytes, type);
            }

            @Override
            public String contentType() {
                return "application/json";
            }
        };
    }

    /** The default serde of a payload type. */
    @SuppressWarnings("unchecked")
    static <T> Serde<T> forType(Class<T> type) {
        if (type == byte[].class) {
            return (Serde<T>) bytes();
        }
        if (type == String.class) {
            return (Serde<T>) utf8();
        }
        return json(DefaultMapper.INSTANCE, type);
    }

    /** The shared default Jackson mapper (modules on the classpath registered, e.g. java.time). */
    final class DefaultMapper {
        static final ObjectMapper INSTANCE = new ObjectMapper().findAndRegisterModules();

        private DefaultMapper() {
        }
    }
}
