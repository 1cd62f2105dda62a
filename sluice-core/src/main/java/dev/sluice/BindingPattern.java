package dev.sluice;

import dev.sluice.internal.text.Echo;
import java.util.regex.Pattern;

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

    /** Whether a routing key matches a pattern. */
    public static boolean matches(String pattern, String routingKey) {
        return routingKey != null && Pattern.compile(toRegex(pattern), Pattern.DOTALL).matcher(routingKey).matches();
    }
}
