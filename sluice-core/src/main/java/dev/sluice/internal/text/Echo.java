package dev.sluice.internal.text;

/**
 * How error messages show input they refuse, and which characters keys may not hold. An echo is cut
 * at {@link #MAX_ECHO} characters and its control characters are replaced by {@code '?'}, so a hostile
 * or huge input can neither flood a log nor drive the terminal that shows the message.
 */
public final class Echo {
    /** The most characters of an input any message shows (names are at most 128, so they show whole). */
    public static final int MAX_ECHO = 140;

    private Echo() {
    }

    /** {@code input} as a message may show it: at most {@link #MAX_ECHO} characters, controls as {@code '?'}. */
    public static String of(String input) {
        if (input == null) {
            return "null";
        }
        String shown = input.length() > MAX_ECHO ? input.substring(0, MAX_ECHO) + "..." : input;
        StringBuilder b = null;
        for (int i = 0; i < shown.length(); i++) {
            if (isControl(shown.charAt(i))) {
                if (b == null) {
                    b = new StringBuilder(shown);
                }
                b.setCharAt(i, '?');
            }
        }
        return b == null ? shown : b.toString();
    }

    /**
     * The index of the first control character of {@code s} (C0, DEL, C1, and the bidirectional
     * overrides that reorder what a terminal shows), or -1.
     */
    public static int firstControl(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (isControl(s.charAt(i))) {
                return i;
            }
        }
        return -1;
    }

    /** Whether {@code ch} is a control character in the sense of {@link #firstControl}. */
    public static boolean isControl(char ch) {
        return ch < 0x20 || (ch >= 0x7f && ch <= 0x9f) || (ch >= 0x202a && ch <= 0x202e) || (ch >= 0x2066 && ch <= 0x2069)
                || ch == 0x2028 || ch == 0x2029;
    }

    /** How a message names the control character at {@code index} of {@code s}, e.g. {@code U+001B at index 3}. */
    public static String describeControl(String s, int index) {
        return String.format("U+%04X at index %d", (int) s.charAt(index), index);
    }
}
