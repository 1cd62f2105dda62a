package dev.sluice.server.json;

import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.io.CharacterEscapes;
import com.fasterxml.jackson.core.io.SerializedString;
import dev.sluice.internal.text.Echo;

/**
 * The escaping of JSON that a terminal or a browser shows: Jackson escapes C0 controls in strings; this also
 * escapes DEL, C1 and the bidirectional and line controls (as a backslash-u escape), so a name, a key or an
 * error text written by anyone cannot drive what shows it. The HTTP API's and the CLI's mappers use it.
 */
public final class ControlEscapes extends CharacterEscapes {
    private final int[] ascii = standardAsciiEscapesForJSON();

    private ControlEscapes(char... alsoEscaped) {
        ascii[0x7f] = CharacterEscapes.ESCAPE_STANDARD;
        for (char c : alsoEscaped) {
            ascii[c] = CharacterEscapes.ESCAPE_STANDARD;
        }
    }

    /** Every control character escaped (JSON printed to a terminal). */
    public static ControlEscapes forTerminals() {
        return new ControlEscapes();
    }

    /** As {@link #forTerminals}, and {@code '<'} too: JSON shown inside an HTML page can never close a script element. */
    public static ControlEscapes forPages() {
        return new ControlEscapes('<');
    }

    @Override
    public int[] getEscapeCodesForAscii() {
        return ascii;
    }

    @Override
    public SerializableString getEscapeSequence(int ch) {
        return ch <= 0xffff && Echo.isControl((char) ch) ? new SerializedString(String.format("\\u%04x", ch)) : null;
    }
}
