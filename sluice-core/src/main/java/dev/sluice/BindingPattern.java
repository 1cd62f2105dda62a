package dev.sluice;

import dev.sluice.internal.text.Echo;

/**
 * Routing patterns of consumer-group bindings: {@code *} matches any run of characters (dots
 * included), {@code ?} exactly one character, everything else itself; patterns are anchored.
 */
public final class BindingPattern {
    private static final int MAX_LENGTH = 256;

    private BindingPattern() {
    }

    /** Raises {@link ErrorCode#INVALID_BINDING} unless {@code pattern} is a valid pattern. */
    public static String validate(String pattern) {
        if (pattern == null || pattern.isEmpty() || pattern.length() > MAX_LENGTH) {
            throw new SluiceException(ErrorCode.INVALID_BINDING, "a binding pattern must be 1 to " + MAX_LENGTH + " characters");
        }
        for (int i = 0; i < pattern.length(); i++) {
            char c = pattern.charAt(i);
            if (Character.isISOControl(c) || Character.isWhitespace(c)) {
                throw new SluiceException(ErrorCode.INVALID_BINDING, "binding pattern '" + Echo.of(pattern)
                        + "' contains whitespace or control characters");
            }
        }
        return pattern;
    }

    /** The anchored regular expression of a pattern (POSIX-compatible, so PostgreSQL's {@code ~} agrees). */
    public static String toRegex(String pattern) {
        validate(pattern);
        StringBuilder re = new StringBuilder("^");
        for (int i = 0; i < pattern.length(); i++) {
            char c = pattern.charAt(i);
            switch (c) {
                case '*' -> re.append(".*");
                case '?' -> re.append('.');
                default -> {
                    if ("\\.[]{}()<>+-=!^$|,:#&~%@;'\"/`".indexOf(c) >= 0) {
                        re.append('\\');
                    }
                    re.append(c);
                }
            }
        }
        return re.append('$').toString();
    }

    /**
     * Whether a routing key matches a pattern: the same answer as {@link #toRegex} (and PostgreSQL's
     * {@code ~} on it), found by a two-pointer glob match that backtracks only to the last {@code *}, so
     * it takes at most pattern length × key length steps, whatever the pattern (a regex can take
     * exponential time on patterns like {@code *a*a*a*b}). {@code ?} and {@code *} step over whole code
     * points, as the regex's {@code .} does.
     */
    public static boolean matches(String pattern, String routingKey) {
        validate(pattern);
        return routingKey != null && globMatches(pattern, routingKey);
    }

    /** {@link #matches} without validating the pattern again (for patterns validated when stored). */
    public static boolean globMatches(String pattern, String key) {
        int p = 0;
        int k = 0;
        int star = -1; // the pattern index just after the last '*' seen
        int resume = 0; // the key index that '*' currently extends to
        while (k < key.length()) {
            if (p < pattern.length()) {
                char c = pattern.charAt(p);
                if (c == '*') {
                    star = ++p;
                    resume = k;
                    continue;
                }
                if (c == '?') {
                    k += Character.charCount(key.codePointAt(k));
                    p++;
                    continue;
                }
                if (c == key.charAt(k)) {
                    k++;
                    p++;
                    continue;
                }
            }
            if (star < 0) {
                return false;
            }
            // Let the last '*' take one more code point and retry the rest of the pattern from there.
            resume += Character.charCount(key.codePointAt(resume));
            k = resume;
            p = star;
        }
        while (p < pattern.length() && pattern.charAt(p) == '*') {
            p++;
        }
        return p == pattern.length();
    }
}
