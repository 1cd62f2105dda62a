package dev.sluice.internal.jdbc;

import java.io.PrintWriter;
import java.io.StringWriter;

/**
 * The one cleaner of error text before it is stored: handler failure texts, exception messages and stack
 * traces, terminal and discard reasons, the delivery log's error column. Such text is hostile (a handler
 * may echo payload bytes into it): PostgreSQL refuses a NUL in {@code text} (SQLState 22021), which made
 * the outcome write fail and the message run again forever. So NUL, the other control characters but
 * tab, newline and carriage return, and lone surrogates become U+FFFD, and the text is cut to
 * {@link #MAX_CHARS}. Text without any of these is returned as it is, without a copy.
 */
public final class ErrorText {
    /** The one length limit of stored error text (message, reason or stack trace), in UTF-16 chars. */
    public static final int MAX_CHARS = 16_000;
    /** What replaces a character that must not be stored. */
    static final char REPLACEMENT = '\uFFFD';
    /** Ends a cut text, so a reader knows there was more. */
    static final String CUT_MARK = "…";

    private ErrorText() {
    }

    /** {@code text} cleaned and cut for storage; null stays null. */
    public static String clean(String text) {
        if (text == null) {
            return null;
        }
        int n = text.length();
        int first = firstBad(text, Math.min(n, MAX_CHARS));
        if (first < 0 && n <= MAX_CHARS) {
            return text;
        }
        int limit = n <= MAX_CHARS ? n : MAX_CHARS - CUT_MARK.length();
        if (limit < n && Character.isHighSurrogate(text.charAt(limit - 1))) {
            limit--; // never keep half of a pair that the cut split
        }
        StringBuilder b = new StringBuilder(limit + CUT_MARK.length());
        b.append(text, 0, first < 0 ? limit : Math.min(first, limit));
        for (int i = b.length(); i < limit; i++) {
            char ch = text.charAt(i);
            if (Character.isHighSurrogate(ch) && i + 1 < limit && Character.isLowSurrogate(text.charAt(i + 1))) {
                b.append(ch).append(text.charAt(++i));
            } else {
                b.append(bad(text, i) ? REPLACEMENT : ch);
            }
        }
        if (limit < n) {
            b.append(CUT_MARK);
        }
        return b.toString();
    }

    /** A throwable's {@code toString()} (class and message), cleaned. */
    public static String of(Throwable error) {
        return clean(String.valueOf(error));
    }

    /** A throwable's stack trace (with causes), cleaned and cut. */
    public static String stackTrace(Throwable error) {
        StringWriter w = new StringWriter();
        error.printStackTrace(new PrintWriter(w));
        return clean(w.toString());
    }

    /** The index of the first character below {@code end} that must be replaced, or -1. */
    private static int firstBad(String text, int end) {
        for (int i = 0; i < end; i++) {
            if (bad(text, i)) {
                return i;
            }
        }
        return -1;
    }

    /** Whether the char at {@code i} must be replaced: a control character (not tab or line breaks), or a lone surrogate. */
    private static boolean bad(String text, int i) {
        char ch = text.charAt(i);
        if (ch < 0x20) {
            return ch != '\t' && ch != '\n' && ch != '\r';
        }
        if (ch == 0x7F || (ch >= 0x80 && ch <= 0x9F)) {
            return true;
        }
        if (Character.isHighSurrogate(ch)) {
            return i + 1 >= text.length() || !Character.isLowSurrogate(text.charAt(i + 1));
        }
        if (Character.isLowSurrogate(ch)) {
            return i == 0 || !Character.isHighSurrogate(text.charAt(i - 1));
        }
        return false;
    }
}
