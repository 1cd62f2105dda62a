package dev.sluice.internal.text;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The one header codec of streams and queues, without a database. */
class HeadersTest {

    private static void assertInvalid(Map<String, String> headers, String message) {
        assertThatThrownBy(() -> Headers.encode(headers)).isInstanceOfSatisfying(SluiceException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.INVALID_HEADERS);
            assertThat(e.getMessage()).contains(message);
        });
    }

    @Test
    void encodesInOrderAndDecodesBack() {
        Map<String, String> h = new LinkedHashMap<>();
        h.put("b", "2");
        h.put("a", "line\nbreak\tand tab");
        String json = Headers.encode(h);
        assertThat(json).isEqualTo("{\"b\":\"2\",\"a\":\"line\\nbreak\\tand tab\"}");
        assertThat(Headers.decode(json)).containsExactly(Map.entry("b", "2"), Map.entry("a", "line\nbreak\tand tab"));
        assertThat(Headers.encode(Map.of())).isNull();
        assertThat(Headers.decode(null)).isEmpty();
        assertThatThrownBy(() -> Headers.decode(json).put("c", "3")).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void anythingButAnObjectOfStringsDecodesAsNone() {
        assertThat(Headers.decode("[1,2]")).isEmpty();
        assertThat(Headers.decode("{not json")).isEmpty();
        assertThat(Headers.decode("{\"a\":1}")).isEmpty();
        assertThat(Headers.decode("\"text\"")).isEmpty();
    }

    @Test
    void refusesBadHeadersWithCodedErrors() {
        Map<String, String> many = new HashMap<>();
        for (int i = 0; i <= Headers.MAX_HEADERS; i++) {
            many.put("h" + i, "v");
        }
        assertInvalid(many, "at most 64 headers");
        assertInvalid(Map.of("", "v"), "header names must be 1 to 128");
        assertInvalid(Map.of("x".repeat(129), "v"), "header names must be 1 to 128");
        assertInvalid(Map.of("bad\u0001name", "v"), "without control characters");
        assertInvalid(Map.of("nul", "a\0b"), "without NUL");
        Map<String, String> nullValue = new HashMap<>();
        nullValue.put("k", null);
        assertInvalid(nullValue, "without NUL");
        Map<String, String> big = new HashMap<>();
        for (int i = 0; i < 10; i++) {
            big.put("h" + i, "v".repeat(1000));
        }
        assertInvalid(big, "headers exceed 8192 bytes");
    }
}
