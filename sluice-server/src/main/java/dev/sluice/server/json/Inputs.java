package dev.sluice.server.json;

import dev.sluice.StartPosition;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.function.Function;
import java.util.function.ToLongFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The texts the HTTP API and the CLI both take: durations and a group's start position. Each caller says
 * how a refusal reads (a request's field or a flag), so only the grammar lives here.
 */
public final class Inputs {
    /** The longest duration either takes (longer ones overflow the millisecond clocks they end up on). */
    public static final Duration MAX_DURATION = Duration.ofDays(36_500);
    private static final Pattern SHORT = Pattern.compile("^(\\d+)(ms|s|m|h|d)$");

    private Inputs() {
    }

    /**
     * The duration {@code text} names ({@code 500ms}, {@code 90s}, {@code 15m}, {@code 24h}, {@code 7d} or ISO-8601
     * like {@code PT1H30M}; case and surrounding blanks do not matter), or null when it names none. The range
     * is not checked: see {@link #inRange}.
     */
    public static Duration duration(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        Matcher m = SHORT.matcher(t);
        try {
            if (m.matches()) {
                long n = Long.parseLong(m.group(1));
                return switch (m.group(2)) {
                    case "ms" -> Duration.ofMillis(n);
                    case "s" -> Duration.ofSeconds(n);
                    case "m" -> Duration.ofMinutes(n);
                    case "h" -> Duration.ofHours(n);
                    default -> Duration.ofDays(n);
                };
            }
            return Duration.parse(text.trim().toUpperCase(Locale.ROOT));
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** Whether {@code d} lies from zero to {@link #MAX_DURATION}. */
    public static boolean inRange(Duration d) {
        return !d.isNegative() && d.compareTo(MAX_DURATION) <= 0;
    }

    /**
     * The start position {@code text} names: {@code beginning} or {@code head} (any case), digits as an id (read by
     * {@code id}), anything else as a time (read by {@code time}); {@code id} and {@code time} refuse what they cannot read.
     */
    public static StartPosition startPosition(String text, ToLongFunction<String> id, Function<String, Instant> time) {
        if (text.equalsIgnoreCase("beginning")) {
            return StartPosition.beginning();
        }
        if (text.equalsIgnoreCase("head")) {
            return StartPosition.head();
        }
        if (!text.isEmpty() && text.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return StartPosition.atId(id.applyAsLong(text));
        }
        return StartPosition.atTime(time.apply(text));
    }
}
