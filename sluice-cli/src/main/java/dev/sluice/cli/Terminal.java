package dev.sluice.cli;

import java.io.FilterWriter;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Writer;

/**
 * The one escaping rule of everything the CLI prints: control characters (C0, DEL, C1, the bidirectional
 * overrides and the Unicode line separators) are shown as hex escapes ({@code \x1b}; above U+00FF a
 * backslash, 'u' and four hex digits), so keys,
 * headers or payloads written by anyone cannot retitle, clear or rewrite an operator's terminal. Tables
 * and key/value lines escape each cell (so columns stay aligned and one value stays on one line); the
 * command's output streams escape whatever else reaches them, keeping only line breaks and tabs.
 */
final class Terminal {
    /** The most characters of an argument an error message repeats (as the library cuts its echoes). */
    static final int MAX_ECHO = 140;

    private Terminal() {
    }

    /** {@code text} with every control character escaped, line breaks and tabs included (one value, one line). */
    static String escape(String text) {
        return escape(text, false);
    }

    /** The most characters of a message from elsewhere (picocli's usage errors, an unexpected exception) shown. */
    static final int MAX_MESSAGE = 400;

    /** An argument as an error message repeats it: escaped, and cut at {@link #MAX_ECHO} characters. */
    static String echo(String text) {
        return cut(text, MAX_ECHO);
    }

    /** A message that may quote input (a usage error, an unexpected exception): escaped, cut at {@link #MAX_MESSAGE}. */
    static String message(String text) {
        return cut(text, MAX_MESSAGE);
    }

    private static String cut(String text, int max) {
        if (text == null) {
            return "null";
        }
        return escape(text.length() > max ? text.substring(0, max) + "..." : text);
    }

    /** Whether the character is escaped on output (the same set the library refuses in keys). */
    static boolean isControl(char ch) {
        return dev.sluice.internal.text.Echo.isControl(ch);
    }

    /** {@code text} escaped; with {@code keepLines}, {@code \n}, {@code \t} and a {@code \r} before {@code \n} pass. */
    static String escape(String text, boolean keepLines) {
        if (text == null) {
            return null;
        }
        StringBuilder b = null;
        for (int i = 0; i < text.length(); i++) {
            char ch = text.charAt(i);
            boolean kept = keepLines && (ch == '\n' || ch == '\t' || ch == '\r' && i + 1 < text.length() && text.charAt(i + 1) == '\n');
            if (!isControl(ch) || kept) {
                if (b != null) {
                    b.append(ch);
                }
                continue;
            }
            if (b == null) {
                b = new StringBuilder(text.length() + 16).append(text, 0, i);
            }
            b.append(ch < 0x100 ? String.format("\\x%02x", (int) ch) : String.format("\\u%04x", (int) ch));
        }
        return b == null ? text : b.toString();
    }

    /** A writer that escapes what passes through it, keeping line breaks and tabs (for the command's out and err). */
    static PrintWriter escaping(PrintWriter target) {
        return new PrintWriter(new FilterWriter(target) {
            @Override
            public void write(int c) throws IOException {
                write(String.valueOf((char) c));
            }

            @Override
            public void write(char[] buf, int off, int len) throws IOException {
                write(new String(buf, off, len));
            }

            @Override
            public void write(String s, int off, int len) throws IOException {
                out.write(escape(s.substring(off, off + len), true));
            }
        }, true);
    }
}
