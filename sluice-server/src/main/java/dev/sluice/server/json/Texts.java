package dev.sluice.server.json;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** Small text helpers of the documents. */
public final class Texts {
    private Texts() {
    }

    /** {@code value.toString()}, or null. */
    public static String text(Object value) {
        return value == null ? null : value.toString();
    }

    /** A duration in milliseconds with microsecond precision (JSON: a number, e.g. 0.412), or null. */
    public static BigDecimal millis(Duration d) {
        return d == null ? null : BigDecimal.valueOf(d.toNanos()).divide(BigDecimal.valueOf(1_000_000), 3, RoundingMode.HALF_UP);
    }

    /**
     * The bytes as text when they are valid UTF-8 without control characters other than tab and line breaks
     * (so they read as text once escaped), else null.
     */
    public static String printable(byte[] bytes) {
        if (bytes == null) {
            return null;
        }
        String s;
        try {
            s = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            if (ch != '\t' && ch != '\n' && ch != '\r' && dev.sluice.internal.text.Echo.isControl(ch)) {
                return null;
            }
        }
        return s;
    }
}
